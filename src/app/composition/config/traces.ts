import * as z from 'zod';
import { HTTPS_ONLY, isEncryptedOrLoopback } from '../../../adapters/shared/loopback.js';
import { httpUrl } from '../../../adapters/shared/variables.js';
import type { Environment } from '../../../ports/stores.js';

/**
 * The trace export's variables, OpenTelemetry's own (decisions §10): whether traces are
 * exported, where to and with which headers, how they are sampled; and the rules that keep
 * the exporter's headers and TLS the service's.
 */

/** `NAME=VALUE[,NAME=VALUE...]`, OpenTelemetry's form of headers (values percent-encoded). */
const otlpHeaders = () =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return {};
      const headers: Record<string, string> = {};
      for (const pair of raw.split(',')) {
        const at = pair.indexOf('=');
        const name = pair.slice(0, at).trim();
        if (at < 1 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
          ctx.addIssue({ code: 'custom', message: 'expected NAME=VALUE[,NAME=VALUE...]' });
          return z.NEVER;
        }
        headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
      }
      return headers;
    });

/** Tracing is off unless OTEL_TRACES_EXPORTER=otlp. */
export const TRACES_VARIABLES = {
  OTEL_TRACES_EXPORTER: z.enum(['none', 'otlp'], { error: 'expected otlp or none' }).default('none'),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl().default('http://localhost:4318'),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(['http/protobuf', 'http/json'], {
      error: 'expected http/protobuf or http/json (gRPC is not offered)',
    })
    .default('http/protobuf'),
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders(),
  // The exporter reads it itself too, and sends it: so it is the service's, with its rule.
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: otlpHeaders(),
  OTEL_SERVICE_NAME: z.string().min(1).default('case-read-service'),
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z
    .string()
    .default('1')
    .transform((raw, ctx) => {
      const ratio = Number(raw);
      if (raw.trim() === '' || !(ratio >= 0 && ratio <= 1)) {
        ctx.addIssue({ code: 'custom', message: 'expected a ratio from 0 to 1' });
        return z.NEVER;
      }
      return ratio;
    }),
};

type TracesVariables = z.output<z.ZodObject<typeof TRACES_VARIABLES>>;

/**
 * Where traces are exported: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` (OpenTelemetry's rule), and the variable
 * that named it.
 */
export function tracesUrlOf(values: {
  readonly OTEL_EXPORTER_OTLP_ENDPOINT: string;
  readonly OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
}): { readonly url: string; readonly variable: string } {
  const traces = values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces !== undefined) return { url: traces, variable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' };
  return {
    url: `${values.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`,
    variable: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  };
}

/** Headers that hold a collector's key travel only over https off loopback (decisions §20). */
export function otlpHeaderRules(env: TracesVariables, ctx: z.RefinementCtx): void {
  if (env.OTEL_TRACES_EXPORTER !== 'otlp') return;
  const { url, variable } = tracesUrlOf(env);
  if (!URL.canParse(url) || isEncryptedOrLoopback(new URL(url))) return;
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'] as const) {
    if (Object.keys(env[name]).length === 0) continue;
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `sent with every export, would cross the network in plaintext to ${new URL(url).host}; ${variable}: ${HTTPS_ONLY}`,
    });
  }
}

/**
 * The OpenTelemetry SDK's own TLS variables, which its exporter would read itself (blocking,
 * whatever the file is): refused, since the exporter is given its own verifying agent
 * (adapters/opentelemetry/tracing.ts) and would not use them. A collector behind a private CA
 * is trusted through NODE_EXTRA_CA_CERTS.
 */
const OTEL_TLS_FILE_VARIABLES = [
  'OTEL_EXPORTER_OTLP_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_CLIENT_KEY',
  'OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE',
  'OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY',
] as const;

/** The OpenTelemetry TLS variables set while traces are exported: each refused, by name. */
export function otelTlsFileProblems(env: Environment, exporting: boolean): string[] {
  if (!exporting) return [];
  return OTEL_TLS_FILE_VARIABLES.filter((name) => env[name]).map(
    (name) =>
      `${name}: not supported: the trace exporter verifies the collector against the system's CAs (add a private CA with NODE_EXTRA_CA_CERTS) and presents no client certificate`,
  );
}
