import { createRequire } from 'node:module';
import type { Tracing } from '../../adapters/opentelemetry/tracing.js';
import type { StoreRef } from '../stores.js';
import { type Config, tracesUrlOf } from './config.js';

/** The service's version, for the traces' resource. */
function serviceVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('../../../package.json') as { version: string }).version;
}

/**
 * Tracing, when `OTEL_TRACES_EXPORTER=otlp` (decisions §10); undefined when off, and then
 * the OpenTelemetry SDK is not even loaded. The headers are both variables' (the traces'
 * own win, as the exporter merges them), checked to travel only over https off loopback.
 */
export async function startTracingIf(config: Config): Promise<Tracing | undefined> {
  if (config.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const { startTracing } = await import('../../adapters/opentelemetry/tracing.js');
  return startTracing({
    serviceName: config.OTEL_SERVICE_NAME,
    serviceVersion: serviceVersion(),
    url: tracesUrlOf(config).url,
    protocol: config.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: { ...config.OTEL_EXPORTER_OTLP_HEADERS, ...config.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    sampler: config.OTEL_TRACES_SAMPLER,
    samplerRatio: config.OTEL_TRACES_SAMPLER_ARG,
  });
}

/** With tracing on, each call to `port` is a span naming the store and its kind. */
export const tracedStore = <T extends object>(tracing: Tracing | undefined, port: T, ref: StoreRef): T =>
  tracing ? tracing.traced(port, ref.role, { 'db.system.name': ref.kind }) : port;
