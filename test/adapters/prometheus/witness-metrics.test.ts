import { describe, expect, it } from 'vitest';
import { PrometheusWitnessMetrics } from '../../../src/adapters/prometheus/witness-metrics.js';

/**
 * The witness's `GET /metrics` (decisions §19), as its composition builds it with this adapter:
 * its own series, named, described and typed as before, and the process's default metrics
 * under the witness's prefix, in a registry of its own (none of the case service's).
 */
describe('PrometheusWitnessMetrics', () => {
  it('shows the answers by status and the latest cosigned checkpoint by origin, in its own registry', async () => {
    const metrics = new PrometheusWitnessMetrics();
    metrics.answered(200);
    metrics.answered(200);
    metrics.answered(409);
    metrics.cosigned('log-a.test.example/log', 5, 1_700_000_000);
    metrics.cosigned('log-a.test.example/log', 7, 1_700_000_060);
    const { contentType, text } = await metrics.exposition();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const own = text
      .split('\n')
      .filter((line) => /^(# (HELP|TYPE) )?case_read_witness_(add|cosigned)/.test(line));
    expect(own).toEqual([
      '# HELP case_read_witness_add_checkpoint_total add-checkpoint requests answered, by HTTP status (200 cosigned; 409 old size not the one held; 403, 404, 422 refused; 400, 413 malformed; 503 state unavailable)',
      '# TYPE case_read_witness_add_checkpoint_total counter',
      'case_read_witness_add_checkpoint_total{status="200"} 2',
      'case_read_witness_add_checkpoint_total{status="409"} 1',
      '# HELP case_read_witness_cosigned_size The tree size of the latest checkpoint this process cosigned, by log origin',
      '# TYPE case_read_witness_cosigned_size gauge',
      'case_read_witness_cosigned_size{origin="log-a.test.example/log"} 7',
      '# HELP case_read_witness_cosigned_timestamp_seconds When this process last cosigned a checkpoint (Unix time), by log origin',
      '# TYPE case_read_witness_cosigned_timestamp_seconds gauge',
      'case_read_witness_cosigned_timestamp_seconds{origin="log-a.test.example/log"} 1700000060',
    ]);
    expect(text).toMatch(/^case_read_witness_process_cpu_user_seconds_total /m);
    expect(text).not.toMatch(/^case_read_(?!witness_)/m);
  });

  it('keeps each instance apart: two witnesses in one process share no series', async () => {
    const one = new PrometheusWitnessMetrics();
    const other = new PrometheusWitnessMetrics();
    one.answered(200);
    expect((await other.exposition()).text).not.toContain('case_read_witness_add_checkpoint_total{');
  });
});
