import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type AccessStoreConfig, parseAccessStore, STORE_DEFAULTS } from '../config.js';

/** Exit statuses: 0 success, 1 failure, 2 usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Bad arguments: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {}

/** A command that ran and failed for a reason the operator can act on: exit 1. */
export class CommandError extends Error {}

export interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: Record<string, string | undefined>;
  readonly stderrIsTty: boolean;
}

export type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Exactly `n` positionals, named for the message. */
export function positionals(given: string[], names: readonly string[]): string[] {
  if (given.length < names.length) throw new UsageError(`missing ${names.slice(given.length).join(' ')}`);
  if (given.length > names.length)
    throw new UsageError(`unexpected argument: ${given.slice(names.length).join(' ')}`);
  return given;
}

/**
 * A store named by a CLI option, else by its environment variable, else the variable's
 * default (the same one `serve` uses); a value that does not parse is a usage error.
 */
export function storeOption<T extends object>(
  flag: string,
  variable: keyof typeof STORE_DEFAULTS,
  option: string | undefined,
  env: Io['env'],
  parse: (raw: string) => T | { error: string },
): T {
  const parsed = parse(option ?? (env[variable] || STORE_DEFAULTS[variable]));
  if ('error' in parsed) throw new UsageError(`${flag}: ${parsed.error}`);
  return parsed;
}

export function accessStoreOf(option: string | undefined, env: Io['env']): AccessStoreConfig {
  return storeOption('--access-store', 'ACCESS_STORE', option, env, parseAccessStore);
}

/** Prints `data` as JSON with --json, else the human lines. */
export function report(io: Io, json: boolean | undefined, data: unknown, human: string | string[]): void {
  if (json) io.out(JSON.stringify(data));
  else for (const line of Array.isArray(human) ? human : [human]) io.out(line);
}

const CN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export function clientIdOf(raw: string): string {
  if (!CN.test(raw))
    throw new UsageError('CN must be 1-64 characters: letters, digits, dot, underscore, hyphen');
  return raw;
}
