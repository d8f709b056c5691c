import * as z from 'zod';
import {
  AWS_ACM_PCA,
  AWS_STS,
  type AwsEndpoint,
  type AwsService,
  awsEndpointsOf,
} from '../../adapters/shared/aws-endpoints.js';
import { HTTPS_ONLY, isEncryptedOrLoopback } from '../../adapters/shared/loopback.js';
import { httpsUrl, httpUrl, presentIn, problemsOf, wholeNumber } from '../../adapters/shared/variables.js';
import { SERVER_LIMITS } from '../../adapters/tls-listener/limits.js';
import { jwksSourceProblem } from '../../domain/access/jwks-source.js';
import { parseQuota } from '../../domain/access/quota.js';
import { DEFAULT_CLIENT_CERT_DAYS, DEFAULT_RENEW_WITHIN_DAYS } from '../../domain/certificates/renew.js';
import { CrnFormat, DEFAULT_CRN_PATTERN } from '../../domain/crn.js';
import { RoleArn } from '../../domain/queue/arns.js';
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_DEADLINE_MS } from '../../ports/deadline.js';
import type { Environment, StoreRole } from '../../ports/stores.js';
import { isNoteName } from '../../tlog/note.js';
import { ConfigError } from '../config-error.js';
import type { StoreRef, StoreRegistry } from '../stores.js';
import { nodeEnvMode, servicePostureProblems } from './posture.js';
import { SERVICE_INFO_VARIABLES } from './service-info.js';

/**
 * The service's configuration, read from environment variables and validated at start-up,
 * as plain data. A bad value stops the process with a message naming the variable and the
 * expected form. The four store variables become `{ role, kind, url, settings }`: which
 * store kind recognised the URL and what that kind's own variables say (each kind reads
 * its own, in its adapter folder); the composition root opens them.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const port = (name: string, fallback: number) =>
  z
    .string()
    .default(String(fallback))
    .transform((raw, ctx) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < 0 || n > 65535) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a port number 0..65535` });
        return z.NEVER;
      }
      return n;
    });

/** Each store variable: the role it names and its default, used by `serve` and the CLI's store options. */
export const STORE_VARIABLES = {
  CASE_STORE: { role: 'cases', fallback: 'sqlite:./data/cases.db' },
  ACCESS_STORE: { role: 'access', fallback: 'sqlite:./data/access.db' },
  AUDIT_STORE: { role: 'audit', fallback: 'sqlite:./data/audit.db' },
  RATE_LIMIT_STORE: { role: 'rateLimit', fallback: 'memory' },
} as const satisfies Record<string, { role: StoreRole; fallback: string }>;

export type StoreVariable = keyof typeof STORE_VARIABLES;

/**
 * The audit log's origin when `AUDIT_ORIGIN` is not set: a name under `.invalid` (RFC 2606),
 * which no real log has, so that each environment sets its own, e.g.
 * `case-read.prod.example.org/audit`.
 */
export const DEFAULT_AUDIT_ORIGIN = 'case-read.invalid/audit';
const AUDIT_ORIGIN_RULE = 'expected a log name without spaces or +, e.g. case-read.prod.example.org/audit';

/** `AUDIT_ORIGIN`'s value (else its default), or undefined when it breaks the rule. */
function auditOrigin(raw: string | undefined): string | undefined {
  const origin = raw || DEFAULT_AUDIT_ORIGIN;
  return isNoteName(origin) ? origin : undefined;
}

/** `AUDIT_ORIGIN`, else its default, for a command that reads nothing else of the configuration. */
export function auditOriginOf(env: Environment): string {
  const origin = auditOrigin(env.AUDIT_ORIGIN);
  if (origin === undefined) throw new ConfigError([`AUDIT_ORIGIN: ${AUDIT_ORIGIN_RULE}`]);
  return origin;
}
export const STORE_VARIABLE_NAMES = Object.keys(STORE_VARIABLES) as readonly StoreVariable[];

/**
 * The URL a store variable names: `given` (a CLI option) if any, else the variable, else
 * its default. The one fall-back rule, for `serve` and every CLI command.
 */
export const storeUrlOf = (name: StoreVariable, env: Environment, given?: string): string =>
  given ?? (env[name] || STORE_VARIABLES[name].fallback);

const filePath = (what: string) => z.string({ error: `required: the path of ${what}` }).min(1);

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
function otelTlsFileProblems(env: Environment, exporting: boolean): string[] {
  if (!exporting) return [];
  return OTEL_TLS_FILE_VARIABLES.filter((name) => env[name]).map(
    (name) =>
      `${name}: not supported: the trace exporter verifies the collector against the system's CAs (add a private CA with NODE_EXTRA_CA_CERTS) and presents no client certificate`,
  );
}

const variablesSchema = z.object({
  TLS_CERT: filePath('the server certificate (PEM)'),
  TLS_KEY: filePath("the server certificate's private key (PEM)"),
  TLS_CLIENT_CA: filePath('the CA bundle trusted for client certificates (PEM)'),
  TLS_CRL: z.string().min(1).optional(),
  // How often the certificate files are read for a change (a mounted secret swapped
  // underneath); 0: only on SIGHUP.
  TLS_WATCH_MS: wholeNumber('TLS_WATCH_MS', 1_000, 0, 3_600_000),
  IDENTITY_MODE: z
    .enum(['tls', 'trusted-header'], { error: 'expected tls or trusted-header' })
    .default('tls'),
  TRUSTED_GATEWAYS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return undefined;
      const names = raw.split(',').map((name) => name.trim());
      if (names.some((name) => !/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/.test(name))) {
        ctx.addIssue({
          code: 'custom',
          message:
            'expected comma-separated certificate CNs of 1-64 characters (letters, digits, space . _ @ -)',
        });
        return z.NEVER;
      }
      return [...new Set(names)];
    }),
  SHUTDOWN_GRACE_MS: wholeNumber('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
  // How long an idle keep-alive connection is kept open (both listeners). It must be longer
  // than the idle timeout of whatever keeps connections to the service (AWS ALB and nginx's
  // upstream keep-alive: 60 s), so that side always closes first and never sends a request
  // on a connection the service is closing (docs/operations/deployment.md).
  KEEP_ALIVE_TIMEOUT_MS: wholeNumber(
    'KEEP_ALIVE_TIMEOUT_MS',
    SERVER_LIMITS.keepAliveTimeoutMs,
    1_000,
    3_600_000,
  ),
  // Deadlines and overload (decisions §11): every request is answered within its deadline,
  // whatever the engines do, and at most MAX_IN_FLIGHT wait on them at once.
  REQUEST_DEADLINE_MS: wholeNumber('REQUEST_DEADLINE_MS', DEFAULT_REQUEST_DEADLINE_MS, 100, 60_000),
  MAX_IN_FLIGHT: wholeNumber('MAX_IN_FLIGHT', DEFAULT_MAX_IN_FLIGHT, 1, 100_000),
  // On SIGTERM, readiness is 503 this long before the listener closes, so a balancer's
  // health check sees it first (HAProxy's defaults, inter 2 s × fall 3, take 6 s).
  SHUTDOWN_DELAY_MS: wholeNumber('SHUTDOWN_DELAY_MS', 7_000, 0, 600_000),
  // Signed audit checkpoints (decisions §9): on when a key is given.
  AUDIT_SIGNING_KEY: z.string().min(1).optional(),
  AUDIT_CHECKPOINT_RECORDS: wholeNumber('AUDIT_CHECKPOINT_RECORDS', 1000, 1, 10_000_000),
  AUDIT_CHECKPOINT_SECONDS: wholeNumber('AUDIT_CHECKPOINT_SECONDS', 60, 1, 86_400),
  // Witnessed checkpoints (decisions §19): a C2SP tlog-policy file naming the witnesses each
  // checkpoint is sent to and the quorum; read and checked at start (app/composition/audit-witnesses.ts).
  AUDIT_WITNESS_POLICY: z.string().min(1).optional(),
  // Each call to a witness is given this long.
  AUDIT_WITNESS_TIMEOUT_MS: wholeNumber('AUDIT_WITNESS_TIMEOUT_MS', 5_000, 100, 60_000),
  // The CA bundle that signs the witnesses' certificates, when not a public one (PEM file).
  AUDIT_WITNESS_TLS_CA: z.string().min(1).optional(),
  // The trail's archive (`audit archive --to`), read by subject access requests (decisions §22).
  AUDIT_ARCHIVE_DIR: z.string().min(1).optional(),
  // The audit log's name in its C2SP checkpoints and verifier key (decisions §14).
  AUDIT_ORIGIN: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const origin = auditOrigin(raw);
      if (origin === undefined) ctx.addIssue({ code: 'custom', message: AUDIT_ORIGIN_RULE });
      return origin ?? DEFAULT_AUDIT_ORIGIN;
    }),
  BEARER_MODE: z
    .enum(['required', 'optional', 'off'], { error: 'expected required, optional or off' })
    .default('required'),
  BEARER_JWKS: z.string().min(1).optional(),
  BEARER_ISSUER: z.string().min(1).optional(),
  BEARER_AUDIENCE: z.string().min(1).optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port('PORT', 8443),
  MANAGEMENT_PORT: port('MANAGEMENT_PORT', 9464),
  RATE_LIMIT_DEFAULT: z
    .string()
    .default('100/1s')
    .transform((raw, ctx) => {
      try {
        return parseQuota(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  CREDENTIALS_ISSUER: z.enum(['sts', 'local'], { error: 'expected sts or local' }).default('sts'),
  STS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'expected an AWS region such as eu-west-2' })
    .default('eu-west-2'),
  STS_ENDPOINT: httpsUrl().optional(),
  STS_ROLE_ARN: z
    .string()
    .refine((raw) => RoleArn.tryParse(raw) !== undefined, { error: 'expected an IAM role ARN' })
    .optional(),
  STS_DURATION_SECONDS: wholeNumber('STS_DURATION_SECONDS', 3600, 900, 43_200),
  STS_TIMEOUT_MS: wholeNumber('STS_TIMEOUT_MS', 5000, 100, 60_000),
  // Client certificates from a CSR, renewed over EST (decisions §12).
  CLIENT_CERT_ISSUER: z
    .enum(['none', 'local', 'acm-pca'], { error: 'expected none, local or acm-pca' })
    .default('none'),
  CLIENT_CA_CERT: z.string().min(1).optional(),
  CLIENT_CA_KEY: z.string().min(1).optional(),
  CLIENT_CERT_DAYS: wholeNumber('CLIENT_CERT_DAYS', DEFAULT_CLIENT_CERT_DAYS, 1, 397),
  CLIENT_CERT_RENEW_WITHIN_DAYS: wholeNumber(
    'CLIENT_CERT_RENEW_WITHIN_DAYS',
    DEFAULT_RENEW_WITHIN_DAYS,
    1,
    397,
  ),
  ACM_PCA_ARN: z
    .string()
    .regex(
      /^arn:aws[a-z-]*:acm-pca:[a-z]{2}(-[a-z]+)+-\d:\d{12}:certificate-authority\/[A-Za-z0-9-]{1,64}$/,
      {
        error: 'expected an AWS Private CA ARN (arn:aws:acm-pca:REGION:ACCOUNT:certificate-authority/ID)',
      },
    )
    .optional(),
  ACM_PCA_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'expected an AWS region such as eu-west-2' })
    .default('eu-west-2'),
  ACM_PCA_ENDPOINT: httpsUrl().optional(),
  // The AWS SDK's own endpoint settings, held to the service's rule and shown by `config
  // check` (decisions §20): checked, with the shared config file's, by
  // adapters/shared/aws-endpoints.ts when an AWS client is in use.
  AWS_ENDPOINT_URL: z.string().optional(),
  AWS_ENDPOINT_URL_STS: z.string().optional(),
  AWS_ENDPOINT_URL_ACM_PCA: z.string().optional(),
  AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: z.string().optional(),
  AWS_CONFIG_FILE: z.string().optional(),
  AWS_SHARED_CREDENTIALS_FILE: z.string().optional(),
  AWS_PROFILE: z.string().optional(),
  // Trimmed, case-blind; shown as the mode read (posture.ts refuses a value of no known mode).
  NODE_ENV: z
    .string()
    .optional()
    .transform((raw) => (raw === undefined ? undefined : (nodeEnvMode(raw) ?? raw))),
  // Node's own; read to refuse 0 in production (posture.ts).
  NODE_TLS_REJECT_UNAUTHORIZED: z.string().optional(),
  CRN_PATTERN: z
    .string()
    .default(DEFAULT_CRN_PATTERN)
    .transform((raw, ctx) => {
      try {
        return CrnFormat.of(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  PUBLIC_URL: z.string().default('/'),
  // What /info on the management listener says (service-info.ts): PRODUCT_ID, GIT_COMMIT.
  ...SERVICE_INFO_VARIABLES,
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  // OpenTelemetry's own variables (decisions §10); tracing is off unless OTEL_TRACES_EXPORTER=otlp.
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
});

/** The variables that say who signs consumers' certificates, and the rules between them. */
const ISSUER_VARIABLES = {
  CLIENT_CERT_ISSUER: true,
  CLIENT_CA_CERT: true,
  CLIENT_CA_KEY: true,
  CLIENT_CERT_DAYS: true,
  ACM_PCA_ARN: true,
  ACM_PCA_REGION: true,
  ACM_PCA_ENDPOINT: true,
  // The time AWS Private CA is given for one certificate.
  REQUEST_DEADLINE_MS: true,
  // The bundle the service trusts: a CA it does not hold may not sign.
  TLS_CLIENT_CA: true,
} as const;

type IssuerVariables = Pick<z.output<typeof variablesSchema>, keyof typeof ISSUER_VARIABLES>;

function issuerRules(env: IssuerVariables, ctx: z.RefinementCtx): void {
  if (env.CLIENT_CERT_ISSUER === 'local') {
    for (const name of ['CLIENT_CA_CERT', 'CLIENT_CA_KEY'] as const) {
      if (env[name] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'required with CLIENT_CERT_ISSUER=local (PEM file)',
        });
      }
    }
  }
  if (env.CLIENT_CERT_ISSUER === 'acm-pca' && env.ACM_PCA_ARN === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['ACM_PCA_ARN'],
      message: 'required with CLIENT_CERT_ISSUER=acm-pca',
    });
  }
}

const issuerSchema = variablesSchema.pick(ISSUER_VARIABLES).superRefine(issuerRules);

/** Headers that hold a collector's key travel only over https off loopback (decisions §20). */
function otlpHeaderRules(env: z.output<typeof variablesSchema>, ctx: z.RefinementCtx): void {
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

const envSchema = variablesSchema.superRefine((env, ctx) => {
  otlpHeaderRules(env, ctx);
  if (env.IDENTITY_MODE === 'trusted-header' && env.TRUSTED_GATEWAYS === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['TRUSTED_GATEWAYS'],
      message:
        'required when IDENTITY_MODE=trusted-header: the CNs of the gateways whose verified certificates may set the identity headers',
    });
  }
  issuerRules(env, ctx);
  if (env.AUDIT_WITNESS_POLICY !== undefined && env.AUDIT_SIGNING_KEY === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUDIT_WITNESS_POLICY'],
      message: 'needs AUDIT_SIGNING_KEY: witnesses cosign the checkpoints it signs',
    });
  }
  if (env.BEARER_MODE === 'off') return;
  for (const name of ['BEARER_JWKS', 'BEARER_ISSUER', 'BEARER_AUDIENCE'] as const) {
    if (env[name] === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `required unless BEARER_MODE=off (BEARER_MODE is ${env.BEARER_MODE})`,
      });
    }
  }
  const jwks = env.BEARER_JWKS === undefined ? undefined : jwksSourceProblem(env.BEARER_JWKS);
  if (jwks !== undefined) ctx.addIssue({ code: 'custom', path: ['BEARER_JWKS'], message: jwks });
});

type ServiceVariables = z.output<typeof envSchema>;

/**
 * The endpoint each AWS client the configuration uses goes to, by the SDK's service id (`STS`,
 * `ACM PCA`), when a setting names one; a client without one goes to the SDK's endpoint for
 * its region. Found by adapters/shared/aws-endpoints.ts, handed to the client explicitly, and
 * shown by `config check`.
 */
export interface AwsEndpointsOf {
  readonly awsEndpoints: Readonly<Record<string, AwsEndpoint>>;
}

/** The configuration: the service's own variables, its four stores, and its AWS endpoints. */
export type Config = ServiceVariables & { readonly [K in StoreVariable]: StoreRef } & AwsEndpointsOf;

/** Re-exported from its own file: the commands name it from here, the application from there. */
export { ConfigError };

/** The crn pattern alone, for the CLI's stores: `CRN_PATTERN` or its default. */
export function crnFormatOf(env: Environment): Config['CRN_PATTERN'] {
  const parsed = variablesSchema.shape.CRN_PATTERN.safeParse(presentIn(env, ['CRN_PATTERN']).CRN_PATTERN);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error, 'CRN_PATTERN'));
  return parsed.data;
}

/** What `certs sign` reads of the configuration: the issuer's variables and `TLS_CLIENT_CA`, no other. */
export type IssuerConfig = z.output<typeof issuerSchema> & AwsEndpointsOf;

/** The AWS clients a configuration uses: STS for `POST /token`, AWS Private CA for client certificates. */
function awsServicesOf(values: {
  readonly CREDENTIALS_ISSUER?: string;
  readonly CLIENT_CERT_ISSUER: string;
}): AwsService[] {
  return [
    ...(values.CREDENTIALS_ISSUER === 'sts' ? [AWS_STS] : []),
    ...(values.CLIENT_CERT_ISSUER === 'acm-pca' ? [AWS_ACM_PCA] : []),
  ];
}

/**
 * The issuer's variables alone, checked as `serve` checks them: `certs sign` needs neither the
 * server's key nor the bearer settings, so whoever signs consumers' certificates is not given
 * them. Throws {@link ConfigError} naming every bad variable.
 */
export function loadIssuerConfig(env: Environment, command: string): IssuerConfig {
  const parsed = issuerSchema.safeParse(presentIn(env, Object.keys(ISSUER_VARIABLES)));
  if (!parsed.success)
    throw new ConfigError(problemsOf(parsed.error).map((problem) => `${command} needs ${problem}`));
  const aws = awsEndpointsOf(env, awsServicesOf(parsed.data));
  if (aws.problems.length > 0) throw new ConfigError([...aws.problems]);
  return { ...parsed.data, awsEndpoints: aws.endpoints };
}

/** The service's own variables, besides the four store variables (the store kinds' own are listed by the registry). */
export const SERVICE_VARIABLES = Object.keys(variablesSchema.shape) as readonly (keyof ServiceVariables)[];

/** Reads the configuration from `env`; throws {@link ConfigError} naming every bad variable. */
export function loadConfig(env: Environment, registry: StoreRegistry): Config {
  const parsed = envSchema.safeParse(presentIn(env, Object.keys(variablesSchema.shape)));
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  const settings = registry.readSettings(env);
  problems.push(...settings.problems);
  const stores: Partial<Record<StoreVariable, StoreRef>> = {};
  for (const name of STORE_VARIABLE_NAMES) {
    const ref = registry.refOf(STORE_VARIABLES[name].role, storeUrlOf(name, env), settings.byKind);
    if ('error' in ref) problems.push(`${name}: ${ref.error}`);
    else stores[name] = ref;
  }
  problems.push(...servicePostureProblems(env, stores, registry));
  // The SDKs' own settings, once the service's say which SDK clients are used.
  const aws = parsed.success ? awsEndpointsOf(env, awsServicesOf(parsed.data)) : undefined;
  problems.push(...(aws?.problems ?? []));
  problems.push(...otelTlsFileProblems(env, parsed.success && parsed.data.OTEL_TRACES_EXPORTER === 'otlp'));
  const { CASE_STORE, ACCESS_STORE, AUDIT_STORE, RATE_LIMIT_STORE } = stores;
  const complete = CASE_STORE && ACCESS_STORE && AUDIT_STORE && RATE_LIMIT_STORE;
  if (!parsed.success || problems.length > 0 || !complete || aws === undefined)
    throw new ConfigError(problems);
  return {
    ...parsed.data,
    CASE_STORE,
    ACCESS_STORE,
    AUDIT_STORE,
    RATE_LIMIT_STORE,
    awsEndpoints: aws.endpoints,
  };
}
