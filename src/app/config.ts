import * as z from 'zod';
import { parseQuota } from '../domain/access/quota.js';
import { CrnFormat, DEFAULT_CRN_PATTERN } from '../domain/crn.js';
import { RoleArn } from '../domain/queue/arns.js';
import type { StoreRole } from '../ports/stores.js';
import { parseStore } from './stores.js';

/**
 * The service's configuration, read from environment variables and validated at start-up.
 * A bad value stops the process with a message naming the variable and the expected form.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const wholeNumber = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .default(String(fallback))
    .transform((raw, ctx) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a whole number ${min}..${max}` });
        return z.NEVER;
      }
      return n;
    });

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

const storeVariable = (name: keyof typeof STORE_VARIABLES) =>
  z
    .string()
    .default(STORE_VARIABLES[name].fallback)
    .transform((raw, ctx) => {
      const parsed = parseStore(STORE_VARIABLES[name].role, raw);
      if ('error' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }
      return parsed;
    });

const filePath = (what: string) => z.string({ error: `required: the path of ${what}` }).min(1);

const variablesSchema = z.object({
  TLS_CERT: filePath('the server certificate (PEM)'),
  TLS_KEY: filePath("the server certificate's private key (PEM)"),
  TLS_CLIENT_CA: filePath('the CA bundle trusted for client certificates (PEM)'),
  TLS_CRL: z.string().min(1).optional(),
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
  ACCESS_STORE: storeVariable('ACCESS_STORE'),
  BEARER_MODE: z
    .enum(['required', 'optional', 'off'], { error: 'expected required, optional or off' })
    .default('required'),
  BEARER_JWKS: z.string().min(1).optional(),
  BEARER_ISSUER: z.string().min(1).optional(),
  BEARER_AUDIENCE: z.string().min(1).optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port('PORT', 8443),
  MANAGEMENT_PORT: port('MANAGEMENT_PORT', 9464),
  CASE_STORE: storeVariable('CASE_STORE'),
  AUDIT_STORE: storeVariable('AUDIT_STORE'),
  RATE_LIMIT_STORE: storeVariable('RATE_LIMIT_STORE'),
  RATE_LIMIT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:._-]{1,64}$/, { error: 'expected 1-64 letters, digits or : . _ -' })
    .default('case-read:'),
  RATE_LIMIT_TIMEOUT_MS: wholeNumber('RATE_LIMIT_TIMEOUT_MS', 50, 1, 10_000),
  RATE_LIMIT_ON_STORE_FAILURE: z
    .enum(['local', 'allow', 'deny'], { error: 'expected local, allow or deny' })
    .default('local'),
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
  UPSTREAM_CONNECTIONS: wholeNumber('UPSTREAM_CONNECTIONS', 16, 1, 1024),
  UPSTREAM_TIMEOUT_MS: wholeNumber('UPSTREAM_TIMEOUT_MS', 2000, 50, 60_000),
  UPSTREAM_RETRIES: wholeNumber('UPSTREAM_RETRIES', 2, 0, 5),
  UPSTREAM_TLS_CERT: z.string().min(1).optional(),
  UPSTREAM_TLS_KEY: z.string().min(1).optional(),
  UPSTREAM_TLS_CA: z.string().min(1).optional(),
  UPSTREAM_API_KEY_FILE: z.string().min(1).optional(),
  UPSTREAM_BEARER_FILE: z.string().min(1).optional(),
  UPSTREAM_TOKEN_URL: z.url({ protocol: /^https?$/, error: 'expected an http(s):// URL' }).optional(),
  UPSTREAM_CLIENT_ID: z.string().min(1).optional(),
  UPSTREAM_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  CREDENTIALS_ISSUER: z.enum(['sts', 'local'], { error: 'expected sts or local' }).default('sts'),
  STS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'expected an AWS region such as eu-west-2' })
    .default('eu-west-2'),
  STS_ENDPOINT: z.url({ protocol: /^https?$/, error: 'expected an http(s):// URL' }).optional(),
  STS_ROLE_ARN: z
    .string()
    .refine((raw) => RoleArn.tryParse(raw) !== undefined, { error: 'expected an IAM role ARN' })
    .optional(),
  STS_DURATION_SECONDS: wholeNumber('STS_DURATION_SECONDS', 3600, 900, 43_200),
  STS_TIMEOUT_MS: wholeNumber('STS_TIMEOUT_MS', 5000, 100, 60_000),
  NODE_ENV: z.string().optional(),
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
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
});

const envSchema = variablesSchema.superRefine((env, ctx) => {
  if (env.CREDENTIALS_ISSUER === 'local' && env.NODE_ENV === 'production') {
    ctx.addIssue({
      code: 'custom',
      path: ['CREDENTIALS_ISSUER'],
      message: 'local is for development only and is refused when NODE_ENV=production; use sts',
    });
  }
  if (env.IDENTITY_MODE === 'trusted-header' && env.TRUSTED_GATEWAYS === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['TRUSTED_GATEWAYS'],
      message:
        'required when IDENTITY_MODE=trusted-header: the CNs of the gateways whose verified certificates may set the identity headers',
    });
  }
  if ((env.UPSTREAM_TLS_CERT === undefined) !== (env.UPSTREAM_TLS_KEY === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [env.UPSTREAM_TLS_CERT === undefined ? 'UPSTREAM_TLS_CERT' : 'UPSTREAM_TLS_KEY'],
      message: 'UPSTREAM_TLS_CERT and UPSTREAM_TLS_KEY go together',
    });
  }
  if (env.UPSTREAM_TOKEN_URL !== undefined) {
    for (const name of ['UPSTREAM_CLIENT_ID', 'UPSTREAM_CLIENT_SECRET_FILE'] as const) {
      if (env[name] === undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'required with UPSTREAM_TOKEN_URL' });
      }
    }
    if (env.UPSTREAM_BEARER_FILE !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPSTREAM_BEARER_FILE'],
        message: 'a static bearer and OAuth2 client credentials (UPSTREAM_TOKEN_URL) are exclusive',
      });
    }
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
  if (
    env.BEARER_JWKS !== undefined &&
    /^[a-z]+:\/\//i.test(env.BEARER_JWKS) &&
    !/^https:\/\//i.test(env.BEARER_JWKS)
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['BEARER_JWKS'],
      message: 'expected a file path or an https:// URL',
    });
  }
});

export type Config = z.output<typeof envSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The variables `serve` needs; the CLI's admin commands read only the ones they use. */
export const SERVE_VARIABLES = Object.keys(variablesSchema.shape);

/** Reads the configuration from `env`; throws {@link ConfigError} naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // An empty variable is treated as unset, as shells and .env files commonly produce them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(environment)');
        return `${name}: ${issue.message}`;
      }),
    );
  }
  return parsed.data;
}

/** Only the variables named, validated alone: for CLI commands that need a few of them. */
export function loadSome<K extends keyof Config>(
  env: Record<string, string | undefined>,
  names: readonly K[],
): Pick<Config, K> {
  const mask = Object.fromEntries(names.map((n) => [n, true])) as Record<string, true>;
  const picked = variablesSchema.pick(mask as never) as unknown as z.ZodType<Pick<Config, K>>;
  const present = Object.fromEntries(
    names.map((n) => [n, env[n as string]] as const).filter(([, v]) => v !== undefined && v !== ''),
  );
  const parsed = picked.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`));
  }
  return parsed.data;
}
