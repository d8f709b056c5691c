import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type AccessStoreConfig, parseAccessStore } from '../config.js';

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

export function accessStoreOf(option: string | undefined, env: Io['env']): AccessStoreConfig {
  const value = option ?? (env.ACCESS_STORE || 'sqlite:./data/access.db');
  const parsed = parseAccessStore(value);
  if ('error' in parsed) throw new UsageError(`--access-store: ${parsed.error}`);
  return parsed;
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
