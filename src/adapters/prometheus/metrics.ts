import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/**
 * Request metrics in Prometheus form, served on the management listener's `/metrics`.
 * Labels are bounded: the operation id (or the route template for other paths) and the
 * status code, never a crn or anything a client chose.
 */
export class PrometheusMetrics {
  private readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'status'>;
  private readonly duration: Histogram<'operation'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'case_read_' });
    this.requests = new Counter({
      name: 'case_read_http_requests_total',
      help: 'Requests answered, by operation and status',
      labelNames: ['operation', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'case_read_http_request_duration_seconds',
      help: 'Time from request to response, by operation',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
  }

  /** Records one answered request. */
  readonly observe = (operation: string, status: number, seconds: number): void => {
    this.requests.inc({ operation, status: String(status) });
    this.duration.observe({ operation }, seconds);
  };

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
