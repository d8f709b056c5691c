// The stores a command opens: named by its option, else its variable, else the default, as
// `serve` names them, and always closed again.
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
import { storePostureProblem } from '../composition/posture.js';
import { STORE_REGISTRY, storeWiring } from '../composition/store-kinds.js';
import type { StoreRef } from '../stores.js';
import { UsageError } from './exit.js';
import type { Io } from './io.js';

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
  // The production posture, as serve checks it: the flag names the store when it was given.
  const posture = storePostureProblem(option === undefined ? variable : flag, ref, STORE_REGISTRY, env);
  if (posture !== undefined) throw new ConfigError([posture]);
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
