import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../src/adapters/prometheus/metrics.js';

describe('PrometheusMetrics', () => {
  it('counts the access store listener’s failures by kind, with no series before the first', async () => {
    const metrics = new PrometheusMetrics();
    expect(await metrics.text()).not.toMatch(/^case_read_access_listener_failures_total\{/m);
    metrics.accessListenerFailed('connect-failed');
    metrics.accessListenerFailed('connect-failed');
    metrics.accessListenerFailed('silent');
    const text = await metrics.text();
    expect(text).toContain('case_read_access_listener_failures_total{failure="connect-failed"} 2');
    expect(text).toContain('case_read_access_listener_failures_total{failure="silent"} 1');
    expect(text).not.toContain('case_read_access_listener_failures_total{failure="lost"}');
  });
});
