import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ClientName } from '../../domain/access/client-name.js';
import type { AccessAdministration, AccessDirectory } from '../../ports/access-directory.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { Opened, StoreWiring } from '../../ports/stores.js';
import {
  ConfigError,
  crnFormatOf,
  STORE_VARIABLES,
  type StoreVariable,
  storeUrlOf,
} from '../composition/config.js';
import { STORE_REGISTRY, storeWiring } from '../composition/store-kinds.js';
import type { StoreRef } from '../stores.js';

/** Exit statuses: 0 success, 1 failure, 2 usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Bad arguments: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {
  /**
   * The error of a command `group` (e.g. `keys`) run with no subcommand, or with one it does
   * not have; `known` lists its subcommands for the message, e.g. `issue, list or revoke`.
   */
  static unknownSubcommand(group: string, known: string, sub: string | undefined): UsageError {
    return new UsageError(
      sub === undefined ? `${group} needs a subcommand: ${known}` : `unknown ${group} subcommand: ${sub}`,
    );
  }
}

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
 * default (the same rule `serve` follows), with its kind's settings from the environment.
 * A URL that does not parse is a usage error; a bad setting is a configuration error.
 */
export function storeOption(
  flag: string,
  variable: StoreVariable,
  option: string | undefined,
  env: Io['env'],
): StoreRef {
  const { byKind, problems } = STORE_REGISTRY.readSettings(env);
  if (problems.length > 0) throw new ConfigError(problems);
  const ref = STORE_REGISTRY.refOf(STORE_VARIABLES[variable].role, storeUrlOf(variable, env, option), byKind);
  if ('error' in ref) throw new UsageError(`${flag}: ${ref.error}`);
  return ref;
}

/** What a store opened by the CLI is wired with: the crn pattern, and warnings on stderr. */
export function storeWiringOf(io: Io): StoreWiring {
  return storeWiring(crnFormatOf(io.env), (level, _fields, message) => {
    if (level !== 'info') io.err(`case-read: ${message}`);
  });
}

/** Runs `run` on an opened store and closes it whatever happens. */
async function using<T, R>(opening: Promise<Opened<T>>, run: (store: T) => Promise<R>): Promise<R> {
  const opened = await opening;
  try {
    return await run(opened.value);
  } finally {
    await opened.close();
  }
}

/**
 * Runs `run` on the access store of the operator commands (`--access-store`, else
 * `ACCESS_STORE`, else its default), and closes it whatever happens.
 */
export const withAccessStore = <R>(
  option: string | undefined,
  io: Io,
  run: (store: AccessDirectory & AccessAdministration) => Promise<R>,
): Promise<R> =>
  using(
    STORE_REGISTRY.openAccessAdministration(
      storeOption('--access-store', 'ACCESS_STORE', option, io.env),
      storeWiringOf(io),
    ),
    run,
  );

/**
 * Runs `run` on the trail the audit commands read (`--audit-store`, else `AUDIT_STORE`, else
 * its default; it must exist), and closes it whatever happens.
 */
export const withAuditStore = <R>(
  option: string | undefined,
  io: Io,
  run: (log: AuditLog) => Promise<R>,
): Promise<R> =>
  using(
    STORE_REGISTRY.openAuditLog(
      storeOption('--audit-store', 'AUDIT_STORE', option, io.env),
      storeWiringOf(io),
      {
        create: false,
      },
    ),
    run,
  );

/** Prints `data` as JSON with --json, else the human lines. */
export function report(io: Io, json: boolean | undefined, data: unknown, human: string | string[]): void {
  if (json) io.out(JSON.stringify(data));
  else for (const line of Array.isArray(human) ? human : [human]) io.out(line);
}

/** Runs a parse of the operator's input; its error becomes a usage error with the same message. */
export function usage<T>(parseInput: () => T): T {
  try {
    return parseInput();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A client name given on the command line; a bad one is a usage error naming the rule. */
export const clientIdOf = (raw: string): ClientName => usage(() => ClientName.parse(raw));
