import { context, propagation, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { AT_ONCE_MEMBERS } from '../../ports/at-once.js';
import type { OutgoingTracing } from '../../ports/tracing.js';

/**
 * OpenTelemetry tracing, with the official SDK (decisions §10): W3C trace context in and
 * out, spans batched to an OTLP/HTTP collector (protobuf or JSON). Loaded only when
 * `OTEL_TRACES_EXPORTER=otlp`: with tracing off none of this is imported, and nothing on
 * the request path changes.
 */

export type TracesSampler =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

export interface TracingSettings {
  readonly serviceName: string;
  readonly serviceVersion: string;
  /** The traces URL (`…/v1/traces`). */
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export (a collector's API key, say): never logged. */
  readonly headers: Readonly<Record<string, string>>;
  readonly sampler: TracesSampler;
  /** The ratio of the `traceidratio` samplers, 0..1. */
  readonly samplerRatio: number;
}

function samplerOf(name: TracesSampler, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/**
 * The exporter's HTTP agent: for https, one that verifies the collector whatever
 * `NODE_TLS_REJECT_UNAUTHORIZED` says (decisions §20). Given, it is used instead of the one the
 * exporter would build from the environment.
 */
const AGENT_OPTIONS = { keepAlive: true, rejectUnauthorized: true } as const;

async function exporterOf(settings: TracingSettings): Promise<SpanExporter> {
  const config = {
    url: settings.url,
    headers: { ...settings.headers },
    httpAgentOptions: { ...AGENT_OPTIONS },
  };
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(config);
}

export interface Tracing extends OutgoingTracing {
  readonly tracer: Tracer;
  /**
   * The port with every method call in a span `ROLE METHOD` (`cases findPersonalDetails`)
   * carrying `attributes`. The arguments (a crn, an e-mail, a key) are never recorded. Its
   * at-once members (`AT_ONCE_MEMBERS`) are not offered: each request makes the calls the
   * spans name.
   */
  traced<T extends object>(port: T, role: string, attributes: Readonly<Record<string, string>>): T;
  /** Exports what is pending, then stops. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing for this process: the context manager (AsyncLocalStorage, which Node, Bun
 * and Deno all have), the W3C propagator and the tracer provider, set as the global ones.
 * `processor` replaces the batching OTLP exporter (the tests' in-memory exporter).
 */
export async function startTracing(settings: TracingSettings, processor?: SpanProcessor): Promise<Tracing> {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': settings.serviceVersion,
    }),
    sampler: samplerOf(settings.sampler, settings.samplerRatio),
    spanProcessors: [processor ?? new BatchSpanProcessor({ exporter: await exporterOf(settings) })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('case-read-service', settings.serviceVersion);

  const inSpan = <T>(
    name: string,
    kind: SpanKind,
    attributes: Readonly<Record<string, string>>,
    call: () => T,
  ): T =>
    tracer.startActiveSpan(name, { kind, attributes }, (span) => {
      const fail = (error: unknown) => {
        // The error's class only: its message may hold what a span must not.
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'Error' });
        span.end();
        throw error;
      };
      try {
        const result = call();
        if (result instanceof Promise) {
          return result.then((value) => {
            span.end();
            return value;
          }, fail) as T;
        }
        span.end();
        return result;
      } catch (error) {
        return fail(error);
      }
    });

  return {
    tracer,
    outgoing: (name, attributes, call) => inSpan(name, SpanKind.CLIENT, attributes, call),
    inject: (headers) => propagation.inject(context.active(), headers),
    traced: (port, role, attributes) => {
      // One wrapper per method, made on its first call: a call then allocates no closure or name.
      const wrappers = new Map<string, { method: unknown; wrapper: (...args: unknown[]) => unknown }>();
      return new Proxy(port, {
        get(target, property, receiver) {
          // A call answered at once from memory is no store call to record (see AT_ONCE_MEMBERS).
          if (typeof property === 'string' && AT_ONCE_MEMBERS.has(property)) return undefined;
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== 'function' || typeof property !== 'string') return value;
          const known = wrappers.get(property);
          if (known?.method === value) return known.wrapper;
          const name = `${role} ${property}`;
          const wrapper = (...args: unknown[]) =>
            inSpan(name, SpanKind.INTERNAL, attributes, () => value.apply(target, args));
          wrappers.set(property, { method: value, wrapper });
          return wrapper;
        },
      });
    },
    shutdown: async () => {
      await provider.shutdown();
      contextManager.disable();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
