// The witness's metrics in Prometheus form: what `case-read witness serve` shows on GET /metrics.
import { MetricsRegistry } from './registry.js';

/**
 * The witness's metrics (decisions §19), in a registry of its own: the witness is its own
 * process and never shares the case service's. Labels are bounded: the HTTP status, and the
 * origins of the logs `WITNESS_LOGS` names (a submission for another origin is never one).
 * Built by the witness's composition root, which hands them to its request handler.
 */
export class PrometheusWitnessMetrics extends MetricsRegistry {
  /** One add-checkpoint answer, by its status. */
  readonly answered: (status: number) => void = this.countedBy(
    'case_read_witness_add_checkpoint_total',
    'add-checkpoint requests answered, by HTTP status (200 cosigned; 409 old size not the one held; 403, 404, 422 refused; 400, 413 malformed; 503 state unavailable)',
    'status',
  );
  private readonly size = this.gauge(
    'case_read_witness_cosigned_size',
    'The tree size of the latest checkpoint this process cosigned, by log origin',
    ['origin'],
  );
  private readonly cosignedAt = this.gauge(
    'case_read_witness_cosigned_timestamp_seconds',
    'When this process last cosigned a checkpoint (Unix time), by log origin',
    ['origin'],
  );

  constructor() {
    super('case_read_witness_');
  }

  /** A checkpoint of `origin`, of `size`, cosigned at `time` (POSIX seconds). */
  cosigned(origin: string, size: number, time: number): void {
    this.size.set({ origin }, size);
    this.cosignedAt.set({ origin }, time);
  }

  /** The exposition text and its content type. */
  async exposition(): Promise<{ readonly contentType: string; readonly text: string }> {
    return { contentType: this.contentType, text: await this.text() };
  }
}
