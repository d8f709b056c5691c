import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PrometheusMetrics } from '../../src/adapters/prometheus/metrics.js';
import { ROOT } from '../support/cli.js';
import { headingAnchors, metricNamesIn } from '../support/docs.js';

/**
 * The operator's kit checked against the service (decisions §13): the alerting rules pass
 * their own `promtool test rules` unit tests, each alert has a runbook section, and every
 * metric an alert or a dashboard panel uses is one the service exports.
 */
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yaml');
const ALERT_TESTS = join(ROOT, 'deploy/prometheus/alerts.test.yaml');
const DASHBOARD = join(ROOT, 'deploy/grafana/case-read-service.json');
const RUNBOOK = 'docs/operations/runbook.md';

/** promtool, from Debian's `prometheus` package (`.ci/run` installs it); its absence fails the test. */
function promtool(...args: string[]) {
  const run = spawnSync('promtool', args, { cwd: join(ROOT, 'deploy/prometheus'), encoding: 'utf8' });
  if (run.error) {
    throw new Error(
      `promtool could not be run (${run.error.message}): apt-get install -y --no-install-recommends prometheus`,
    );
  }
  return run;
}

interface Rule {
  readonly alert: string;
  readonly expr: string;
  readonly labels?: { readonly severity?: string };
  readonly annotations?: { readonly runbook_url?: string; readonly summary?: string };
}
/** The alerting rules, as `promtool check rules` reads them. */
const rules = (): Rule[] =>
  (parse(readFileSync(ALERTS, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** Every metric name the service exports, histograms with their series suffixes, and the few others the alerts read. */
async function exportedMetrics(): Promise<Set<string>> {
  const metrics = new PrometheusMetrics();
  // Register the metrics that appear only once in use, as a running service has them.
  metrics.inFlight(() => 0);
  metrics.auditCheckpoints().observed(1, { seq: 1, time: new Date().toISOString() });
  metrics.auditWitnesses(['w1']);
  // Prometheus's own, and the kubelet's of the audit store's volume (CaseReadAuditVolumeFillingUp).
  const names = new Set<string>([
    'up',
    'kubelet_volume_stats_available_bytes',
    'kubelet_volume_stats_capacity_bytes',
  ]);
  for (const [, name, type] of (await metrics.text()).matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (name === undefined) continue;
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

describe('deploy/prometheus/alerts.yaml', () => {
  it('passes promtool check rules and its unit tests (promtool test rules)', () => {
    const checked = promtool('check', 'rules', ALERTS);
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    const tested = promtool('test', 'rules', ALERT_TESTS);
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout + tested.stderr).toContain('SUCCESS');
  });

  it('has at least eight alerts, each with a severity and a runbook section of its own name', () => {
    const all = rules();
    expect(all.length).toBeGreaterThanOrEqual(8);
    const anchors = headingAnchors(readFileSync(join(ROOT, RUNBOOK), 'utf8'));
    for (const rule of all) {
      expect(['page', 'ticket'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.runbook_url, rule.alert).toBe(`${RUNBOOK}#${rule.alert.toLowerCase()}`);
      expect(anchors, `${RUNBOOK} has no section for ${rule.alert}`).toContain(rule.alert.toLowerCase());
    }
  });

  it('every alert fires in its unit tests', () => {
    const tests = readFileSync(ALERT_TESTS, 'utf8');
    for (const rule of rules()) {
      expect(tests, `no promtool test fires ${rule.alert}`).toMatch(
        new RegExp(`alertname: ${rule.alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels`),
      );
    }
  });

  it('uses only metrics the service exports', async () => {
    const exported = await exportedMetrics();
    const used = rules().flatMap((r) => metricNamesIn(r.expr));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });
});

describe('deploy/grafana/case-read-service.json', () => {
  interface Panel {
    readonly title: string;
    readonly type: string;
    readonly targets?: readonly { readonly expr: string }[];
  }
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
  const panels = dashboard.panels.filter((p) => p.type !== 'row');

  it('has at least eight panels, each with a query', () => {
    expect(panels.length).toBeGreaterThanOrEqual(8);
    for (const panel of panels) expect(panel.targets?.length ?? 0, panel.title).toBeGreaterThan(0);
  });

  it('uses only metrics the service exports', async () => {
    const exported = await exportedMetrics();
    const used = panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNamesIn(t.expr)));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });
});

describe('the metrics check itself', () => {
  it('finds the metric names of PromQL, not its functions, labels, strings or durations', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (job, le) (rate(case_read_http_request_duration_seconds_bucket{status=~"5.."}[5m]))) > 1 and on (job) up == 0',
      ),
    ).toEqual(['case_read_http_request_duration_seconds_bucket', 'up']);
    expect(
      metricNamesIn(
        'min by (client) (case_read_client_certificate_expiry_timestamp_seconds) - time() < 7 * 86400',
      ),
    ).toEqual(['case_read_client_certificate_expiry_timestamp_seconds']);
  });
});
