import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createManagementApp } from '../../../src/adapters/http/management.js';
import { PrometheusMetrics } from '../../../src/adapters/prometheus/metrics.js';
import { ConfigError, loadConfig } from '../../../src/app/composition/config.js';
import { serviceInfoOf } from '../../../src/app/composition/service-info.js';
import { STORE_REGISTRY } from '../../../src/app/composition/store-kinds.js';
import { ROOT } from '../../support/cli.js';
import { fixtureApp } from '../../support/http.js';

const metrics = new PrometheusMetrics();

/** The variables `serve` cannot start without, so that loadConfig reads the rest. */
const REQUIRED = {
  TLS_CERT: '/etc/case-read/server.pem',
  TLS_KEY: '/etc/case-read/server-key.pem',
  TLS_CLIENT_CA: '/etc/case-read/clients-ca.pem',
  BEARER_JWKS: '/etc/case-read/jwks.json',
  BEARER_ISSUER: 'https://issuer.example',
  BEARER_AUDIENCE: 'case-read-service',
};
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const BUILD = { name: PACKAGE.name, version: PACKAGE.version };

/** `/info`'s body and response, as `serve` would answer it with `env` set. */
async function infoWith(env: Record<string, string>) {
  const info = serviceInfoOf(loadConfig({ ...REQUIRED, ...env }, STORE_REGISTRY));
  const response = await createManagementApp({ info, checks: [], metrics }).request('/info');
  return { response, body: await response.json() };
}

/** The problems loadConfig names for `env`, none when it starts. */
function problemsWith(env: Record<string, string>): readonly string[] {
  try {
    loadConfig({ ...REQUIRED, ...env }, STORE_REGISTRY);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('the management listener', () => {
  it('/health/live is UP while the process runs', async () => {
    const app = createManagementApp({ checks: [], metrics });
    const response = await app.request('/health/live');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'UP' });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it("/health/ping (the estate's liveness) is UP with the same headers, asking no store", async () => {
    let asked = 0;
    const app = createManagementApp({
      checks: [
        {
          name: 'auditStore',
          check: () => {
            asked += 1;
            throw new Error('down');
          },
        },
      ],
      metrics,
    });
    const response = await app.request('/health/ping');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'UP' });
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(asked).toBe(0);
  });

  it('/info answers the info it is given, as it is, with the same headers', async () => {
    const info = { build: BUILD, git: { commit: { id: 'abcdef1' } }, productId: 'DPS123' };
    const response = await createManagementApp({ info, checks: [], metrics }).request('/info');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await response.json()).toEqual(info);
  });

  it('/info names the build from package.json, and the commit and product id only when set', async () => {
    const bare = await infoWith({});
    expect(bare.response.status).toBe(200);
    expect(bare.body).toEqual({ build: BUILD });
    const commit = 'ABCDEF0123456789abcdef0123456789ABCDEF01';
    expect((await infoWith({ GIT_COMMIT: commit, PRODUCT_ID: 'DPS123' })).body).toEqual({
      build: BUILD,
      git: { commit: { id: commit.toLowerCase() } },
      productId: 'DPS123',
    });
    expect((await infoWith({ PRODUCT_ID: 'DPS123' })).body).toEqual({ build: BUILD, productId: 'DPS123' });
    expect((await infoWith({ GIT_COMMIT: 'abcdef1' })).body).toEqual({
      build: BUILD,
      git: { commit: { id: 'abcdef1' } },
    });
    // An image built without --build-arg GIT_COMMIT has the variable empty: unset, as every variable.
    expect((await infoWith({ GIT_COMMIT: '', PRODUCT_ID: '' })).body).toEqual({ build: BUILD });
  });

  it.each([
    ['GIT_COMMIT', 'main'],
    ['GIT_COMMIT', 'abcdef'],
    ['GIT_COMMIT', 'a'.repeat(41)],
    ['GIT_COMMIT', 'abcdefg'],
    ['PRODUCT_ID', 'DPS\u0007123'],
    ['PRODUCT_ID', 'DPS\n123'],
    ['PRODUCT_ID', 'DPS\u009b123'],
    ['PRODUCT_ID', 'p'.repeat(65)],
  ])('refuses %s=%j at start, naming it', (name, value) => {
    const problems = problemsWith({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}: expected`));
  });

  it('accepts a GIT_COMMIT of 7 to 40 hex digits and a PRODUCT_ID of up to 64 characters', () => {
    expect(problemsWith({ GIT_COMMIT: 'abcdef1', PRODUCT_ID: 'p'.repeat(64) })).toEqual([]);
    expect(problemsWith({ GIT_COMMIT: 'F'.repeat(40), PRODUCT_ID: 'Digital Prison Services – 060' })).toEqual(
      [],
    );
  });

  it('/health/ready is 200 when every store answers, 503 naming the one that does not, without its error', async () => {
    const ok = createManagementApp({
      checks: [
        { name: 'caseStore', check: () => {} },
        { name: 'auditStore', check: async () => {} },
      ],
      metrics,
    });
    expect(await (await ok.request('/health/ready')).json()).toEqual({
      status: 'UP',
      checks: { caseStore: 'UP', auditStore: 'UP' },
    });
    const broken = createManagementApp({
      checks: [
        { name: 'caseStore', check: () => {} },
        {
          name: 'auditStore',
          check: () => {
            throw new Error('SQLITE_READONLY /srv/secret/audit.db');
          },
        },
      ],
      metrics,
    });
    const response = await broken.request('/health/ready');
    expect(response.status).toBe(503);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ status: 'DOWN', checks: { caseStore: 'UP', auditStore: 'DOWN' } });
    expect(text).not.toContain('secret');
  });

  it('/health/ready answers within a second whatever the engines do: a check that never answers is TIMEOUT', async () => {
    const app = createManagementApp({
      checks: [
        { name: 'caseStore', check: () => {} },
        { name: 'auditStore', check: () => new Promise<void>(() => {}) },
        { name: 'rateLimitStore', check: () => Promise.reject(new Error('refused')) },
      ],
      metrics,
    });
    const started = performance.now();
    const response = await app.request('/health/ready');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      status: 'DOWN',
      checks: { caseStore: 'UP', auditStore: 'TIMEOUT', rateLimitStore: 'DOWN' },
    });
  });

  it('/metrics has the deadline, overload, in-flight and audit-failure series', async () => {
    const own = new PrometheusMetrics();
    let inFlight = 3;
    own.inFlight(() => inFlight);
    own.deadlineExceeded('auditStore');
    own.deadlineExceeded('auditStore');
    own.overloaded();
    own.auditAppendFailed('withheld');
    own.auditAppendFailed('lost');
    own.auditAppendFailed('withheld');
    const text = await own.text();
    expect(text).toContain('case_read_audit_append_failures_total{outcome="withheld"} 2');
    expect(text).toContain('case_read_audit_append_failures_total{outcome="lost"} 1');
    expect(text).toContain('case_read_deadline_exceeded_total{engine="auditStore"} 2');
    expect(text).toContain('case_read_overloaded_total 1');
    expect(text).toContain('case_read_in_flight_requests 3');
    inFlight = 0;
    expect(await own.text()).toContain('case_read_in_flight_requests 0');
  });

  it('/metrics counts requests by operation and status, with latency buckets, and no crn', async () => {
    const own = new PrometheusMetrics();
    const app = fixtureApp({ observe: own.observe });
    await app.request('/case/X123456');
    await app.request('/case/X123456');
    await app.request('/case/Q000000/community-manager');
    const management = createManagementApp({ checks: [], metrics: own });
    const response = await management.request('/metrics');
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('case_read_http_requests_total{operation="GET /case/:crn",status="200"} 2');
    expect(text).toContain(
      'case_read_http_requests_total{operation="GET /case/:crn/community-manager",status="404"} 1',
    );
    expect(text).toMatch(
      /case_read_http_request_duration_seconds_bucket\{le="0\.001",operation="GET \/case\/:crn"\} \d/,
    );
    expect(text).toContain('case_read_process_cpu_seconds_total');
    expect(text).not.toContain('X123456');
    expect(text).not.toContain('Q000000');
  });

  it('anything else is 404', async () => {
    expect((await createManagementApp({ checks: [], metrics }).request('/case/X123456')).status).toBe(404);
  });
});
