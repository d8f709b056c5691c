import { z } from 'zod';
import { CrnFormat, DEFAULT_CRN_PATTERN } from '../domain/crn.js';

/**
 * The service's configuration, read from environment variables and validated at start-up.
 * A bad value stops the process with a message naming the variable and the expected form.
 */

export type CaseStoreConfig = { kind: 'memory' } | { kind: 'sqlite'; path: string };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Parses a `CASE_STORE` value; also used by the CLI's `--store` option. */
export function parseCaseStore(value: string): CaseStoreConfig | { error: string } {
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length);
    if (path.length === 0) return { error: 'sqlite: needs a file path, e.g. sqlite:./data/cases.db' };
    return { kind: 'sqlite', path };
  }
  if (/^https?:\/\//.test(value)) {
    return {
      error: 'an upstream http(s) case store is not available in this version; use memory or sqlite:PATH',
    };
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    return { error: 'a PostgreSQL case store is not available in this version; use memory or sqlite:PATH' };
  }
  return { error: 'expected memory or sqlite:PATH' };
}

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

const envSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port('PORT', 8443),
  CASE_STORE: z
    .string()
    .default('sqlite:./data/cases.db')
    .transform((raw, ctx) => {
      const parsed = parseCaseStore(raw);
      if ('error' in parsed) {
        ctx.addIssue({ code: 'custom', message: parsed.error });
        return z.NEVER;
      }
      return parsed;
    }),
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

export type Config = z.output<typeof envSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

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
