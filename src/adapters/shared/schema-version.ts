/**
 * A store's schema version against the one this code knows, the same for every engine.
 *
 * A store records how many of its migrations have been applied (its version) and, from this
 * release on, the oldest version whose code can still use it (`usable from`): migrations are
 * expand-only, so a store a newer release migrated stays usable by this one when that release
 * says so. Without the record, only the exact version is usable: what cannot be shown to be
 * compatible is refused.
 */

/** The command that migrates every configured store; named wherever an older store is refused. */
export const MIGRATE_COMMAND = 'case-read stores migrate';

/** What a store records about its schema; version 0 is a store that does not exist. */
export interface RecordedSchema {
  readonly version: number;
  /** The oldest version whose code can use the store; absent when the store does not say. */
  readonly usableFrom?: number;
}

export type SchemaStanding =
  | { readonly kind: 'absent' }
  | { readonly kind: 'current' }
  | { readonly kind: 'older' }
  /** Written by a newer release that says this one can still use it: used as it is. */
  | { readonly kind: 'newer-usable' }
  | { readonly kind: 'newer' };

/** How a store at `recorded` stands for code that knows `known` migrations. */
export function standingOf(recorded: RecordedSchema, known: number): SchemaStanding {
  if (recorded.version === 0) return { kind: 'absent' };
  if (recorded.version === known) return { kind: 'current' };
  if (recorded.version < known) return { kind: 'older' };
  return recorded.usableFrom !== undefined && recorded.usableFrom <= known
    ? { kind: 'newer-usable' }
    : { kind: 'newer' };
}

/** Why a store at `recorded` cannot be used by code that knows `known` migrations (older or newer). */
export function refusalOf(where: string, recorded: RecordedSchema, known: number): string {
  if (recorded.version < known) {
    return `${where} is at schema version ${recorded.version}, this release needs ${known}; migrate it with: ${MIGRATE_COMMAND}`;
  }
  const usable =
    recorded.usableFrom === undefined
      ? 'it does not say which older releases can use it'
      : `it is usable from version ${recorded.usableFrom}`;
  return `${where} is at schema version ${recorded.version}, written by a newer release than this one (${known}), and ${usable}`;
}

/**
 * The usable-from value this code records after migrating: the store description's own, which
 * may never be above the version it describes (a mistake caught when the store opens).
 */
export function usableFromOf(
  store: { readonly what: string; readonly usableFrom: number },
  known: number,
): number {
  if (!Number.isInteger(store.usableFrom) || store.usableFrom < 1 || store.usableFrom > known) {
    throw new Error(`${store.what}: usableFrom ${store.usableFrom} must be 1..${known}`);
  }
  return store.usableFrom;
}
