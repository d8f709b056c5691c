import type { Environment, StoreRole } from '../../../ports/stores.js';
import type { StoreRef, StoreRegistry } from '../../stores.js';

/**
 * The four store variables: the role each names, its default, the one rule by which a URL
 * is found for it, and each read into `{ role, kind, url, settings }` by the store registry
 * (which store kind recognised the URL and what that kind's own variables say: each kind
 * reads its own, in its adapter folder).
 */

/** Each store variable: the role it names and its default, used by `serve` and the CLI's store options. */
export const STORE_VARIABLES = {
  CASE_STORE: { role: 'cases', fallback: 'sqlite:./data/cases.db' },
  ACCESS_STORE: { role: 'access', fallback: 'sqlite:./data/access.db' },
  AUDIT_STORE: { role: 'audit', fallback: 'sqlite:./data/audit.db' },
  RATE_LIMIT_STORE: { role: 'rateLimit', fallback: 'memory' },
} as const satisfies Record<string, { role: StoreRole; fallback: string }>;

export type StoreVariable = keyof typeof STORE_VARIABLES;

export const STORE_VARIABLE_NAMES = Object.keys(STORE_VARIABLES) as readonly StoreVariable[];

/**
 * The URL a store variable names: `given` (a CLI option) if any, else the variable, else
 * its default. The one fall-back rule, for `serve` and every CLI command.
 */
export const storeUrlOf = (name: StoreVariable, env: Environment, given?: string): string =>
  given ?? (env[name] || STORE_VARIABLES[name].fallback);

/**
 * The four stores `env` names, each as the registry reads it, and the problems found: the
 * store kinds' own variables first, then each store variable the registry refuses, in order.
 */
export function readStores(
  env: Environment,
  registry: StoreRegistry,
): { readonly stores: Partial<Record<StoreVariable, StoreRef>>; readonly problems: readonly string[] } {
  const settings = registry.readSettings(env);
  const problems = [...settings.problems];
  const stores: Partial<Record<StoreVariable, StoreRef>> = {};
  for (const name of STORE_VARIABLE_NAMES) {
    const ref = registry.refOf(STORE_VARIABLES[name].role, storeUrlOf(name, env), settings.byKind);
    if ('error' in ref) problems.push(`${name}: ${ref.error}`);
    else stores[name] = ref;
  }
  return { stores, problems };
}
