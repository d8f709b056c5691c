// One process's Prometheus registry and how a metric is declared in it: the base of the
// service's metrics (metrics.ts) and the witness's (witness-metrics.ts), each its own registry.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * A registry with the runtime's default metrics under `prefix`, the metrics its subclass
 * declares with {@link counter} (or {@link countedBy}), {@link gauge} and {@link histogram},
 * and its exposition.
 */
export abstract class MetricsRegistry {
  protected readonly registry = new Registry();

  constructor(prefix: string) {
    collectDefaultMetrics({ register: this.registry, prefix });
  }

  /** A counter of this registry, with the labels it is counted by (none: one series). */
  protected counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  /**
   * A counter of this registry by one label, as what counts it: each call adds one to the
   * series of the label's value given (a series shows from its first count).
   */
  protected countedBy<L extends string>(name: string, help: string, label: L) {
    const counter = this.counter(name, help, [label]);
    return (value: string | number): void => {
      counter.inc({ [label]: value } as Partial<Record<L, string | number>>);
    };
  }

  /** A gauge of this registry; `collect`, if given, sets it each time it is scraped. */
  protected gauge<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    collect?: (gauge: Gauge<L>) => void | Promise<void>,
  ) {
    return new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect === undefined
        ? {}
        : {
            collect: function (this: Gauge<L>) {
              return collect(this);
            },
          }),
    });
  }

  /** A histogram of this registry, with its buckets in seconds. */
  protected histogram<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: readonly number[],
  ) {
    return new Histogram<L>({ name, help, labelNames, buckets: [...buckets], registers: [this.registry] });
  }

  /** The content type of {@link text}. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric of this registry in the exposition format, collected now. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
