// What the witness counts, and shows on GET /metrics: the interface its handler is given.

/**
 * The witness's metrics (`GET /metrics`), as its handler uses them. Its composition root
 * builds them with the Prometheus adapter (src/adapters/prometheus/witness-metrics.ts), in a
 * registry of the witness's own.
 */
export interface WitnessMetrics {
  /** One add-checkpoint answer, by its HTTP status. */
  answered(status: number): void;
  /** A checkpoint of `origin`, of `size`, cosigned at `time` (POSIX seconds). */
  cosigned(origin: string, size: number, time: number): void;
  /** The exposition text and its content type. */
  exposition(): Promise<{ readonly contentType: string; readonly text: string }>;
}
