import { describe, expect, it } from 'vitest';
import { createManagementApp } from '../../../src/adapters/http/management.js';
import { PrometheusMetrics } from '../../../src/adapters/prometheus/metrics.js';
import { fixtureApp } from '../../support/http.js';

const metrics = new PrometheusMetrics();

describe('the management listener', () => {
  it('/health/live is UP while the process runs', async () => {
    const app = createManagementApp({ checks: [], metrics });
    const response = await app.request('/health/live');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'UP' });
    expect(response.headers.get('cache-control')).toBe('no-store');
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
