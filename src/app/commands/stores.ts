// `case-read stores migrate`: every configured store brought to this release's schema, each
// one's version said before and after; nothing else is changed.
import { type SchemaMigration, StoreError } from '../../ports/stores.js';
import { STORE_REGISTRY } from '../composition/store-kinds.js';
import { storeOption, storeWiringOf } from './command-stores.js';
import { CommandError, EXIT } from './exit.js';
import type { Io } from './io.js';

/** The stores `stores migrate` visits, in order: each one's option (`--case-store`, …) and variable. */
const MIGRATED = [
  { what: 'case store', option: 'case-store', given: 'caseStore', variable: 'CASE_STORE' },
  { what: 'access store', option: 'access-store', given: 'accessStore', variable: 'ACCESS_STORE' },
  { what: 'audit store', option: 'audit-store', given: 'auditStore', variable: 'AUDIT_STORE' },
] as const;

/** What became of one store, as `--json` reports it. */
type Outcome =
  | {
      readonly outcome: 'migrated' | 'current' | 'absent' | 'newer';
      readonly before: number;
      readonly after: number;
      readonly current: number;
    }
  | { readonly outcome: 'no-schema' }
  | { readonly outcome: 'failed'; readonly error: string };

function outcomeOf(found: SchemaMigration): Outcome {
  const { before, after, current } = found;
  const outcome =
    before === 0 ? 'absent' : after > current ? 'newer' : before === after ? 'current' : 'migrated';
  return { outcome, before, after, current };
}

/** The human line for one store's outcome. */
function lineOf(what: string, shown: string, result: Outcome): string {
  switch (result.outcome) {
    case 'migrated':
      return `${what} ${shown}: version ${result.before} -> ${result.after}, migrated`;
    case 'current':
      return `${what} ${shown}: version ${result.before}, current (nothing to do)`;
    case 'absent':
      return `${what} ${shown}: absent, not created (nothing to migrate)`;
    case 'newer':
      return `${what} ${shown}: version ${result.before}, newer than this release (${result.current}) and usable by it; left as it is`;
    case 'no-schema':
      return `${what} ${shown}: keeps no schema (nothing to migrate)`;
    case 'failed':
      return `${what} ${shown}: FAILED: ${result.error}`;
  }
}

export async function migrate(
  values: {
    caseStore?: string | undefined;
    accessStore?: string | undefined;
    auditStore?: string | undefined;
    json?: boolean | undefined;
  },
  io: Io,
): Promise<number> {
  // Every store named is checked before any is touched: a mistyped URL migrates nothing.
  const refs = MIGRATED.map((store) => ({
    ...store,
    ref: storeOption(`--${store.option}`, store.variable, values[store.given], io.env),
  }));
  const wiring = storeWiringOf(io);
  const results: { store: string; url: string; result: Outcome }[] = [];
  for (const { what, ref } of refs) {
    const shown = STORE_REGISTRY.display(ref);
    let result: Outcome;
    try {
      const migrating = STORE_REGISTRY.migrate(ref, wiring);
      result = migrating === undefined ? { outcome: 'no-schema' } : outcomeOf(await migrating);
    } catch (error) {
      // A store that fails does not stop the others: each is its own transaction.
      if (!(error instanceof StoreError)) throw error;
      result = { outcome: 'failed', error: error.message };
    }
    results.push({ store: what, url: shown, result });
    if (!values.json) io.out(lineOf(what, shown, result));
  }
  if (values.json)
    io.out(JSON.stringify({ stores: results.map(({ store, url, result }) => ({ store, url, ...result })) }));
  const failed = results.filter(({ result }) => result.outcome === 'failed');
  if (failed.length > 0) {
    throw new CommandError(
      `${failed.map(({ store }) => store).join(', ')} not migrated; nothing else was changed in it`,
    );
  }
  return EXIT.ok;
}
