import { jsonlStores } from '../adapters/jsonl/store-kind.js';
import { InMemoryRateLimiter } from '../adapters/memory/rate-limiter.js';
import { memoryStores } from '../adapters/memory/store-kind.js';
import { postgresStores } from '../adapters/postgres/store-kind.js';
import { redisStores } from '../adapters/redis/store-kind.js';
import { sqliteStores } from '../adapters/sqlite/store-kind.js';
import { upstreamStores } from '../adapters/upstream-http/store-kind.js';
import type { AccessAdministration, AccessDirectory } from '../ports/access-directory.js';
import type { AuditLog } from '../ports/audit-log.js';
import type { CaseRepository, CaseWriter } from '../ports/case-repository.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import {
  type Opened,
  type StoreContext,
  StoreError,
  type StoreKind,
  type StoreRole,
} from '../ports/stores.js';

/** The CLI reads case files with the same loader the memory store uses. */
export { CaseFileError, loadCaseFile } from '../adapters/memory/case-file.js';

/**
 * The registry of store kinds. Each adapter folder that holds state brings its own
 * {@link StoreKind}: how its URLs look, how they are shown, and how each role opens. A new
 * store technology is that folder plus one line here; configuration, `config check`,
 * `serve` and every CLI command reach stores only through this file.
 */
const KINDS: readonly StoreKind[] = [
  memoryStores,
  sqliteStores,
  jsonlStores,
  postgresStores,
  redisStores,
  upstreamStores,
];

/** A store named by a URL the registry accepted for a role. */
export interface StoreRef {
  readonly kind: StoreKind;
  readonly url: string;
  readonly role: StoreRole;
}

const ROLE_NAMES: Record<StoreRole, string> = {
  cases: 'a case store',
  access: 'an access store',
  audit: 'an audit store',
  rateLimit: 'a rate-limit store',
};

/** The forms accepted for a role, for messages: `memory or sqlite:PATH`. */
export function formsFor(
  role: StoreRole,
  need: (kind: StoreKind) => boolean = (k) => Boolean(k[role]),
): string {
  const forms = KINDS.filter(need).map((k) => k.form);
  return forms.length <= 1 ? (forms[0] ?? '(none)') : `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}`;
}

/** Parses a store URL for a role; the error names what is accepted. */
export function parseStore(role: StoreRole, url: string): StoreRef | { error: string } {
  const kind = KINDS.find((k) => k.recognises(url));
  if (kind === undefined) return { error: `expected ${formsFor(role)}` };
  if (kind[role] === undefined) {
    return { error: `${kind.name} cannot hold ${ROLE_NAMES[role]}; expected ${formsFor(role)}` };
  }
  const problem = kind.problem(url);
  return problem === undefined ? { kind, url, role } : { error: problem };
}

/** The store as it may be shown in logs and `config check`: any password masked. */
export const displayStore = (ref: StoreRef): string => ref.kind.display(ref.url);

export const isStoreRef = (value: unknown): value is StoreRef =>
  typeof value === 'object' && value !== null && 'kind' in value && 'url' in value && 'role' in value;

export function openCaseRepository(ref: StoreRef, context: StoreContext): Promise<Opened<CaseRepository>> {
  const role = ref.kind.cases;
  if (!role) throw new StoreError(`${displayStore(ref)} cannot hold cases`);
  return role.open(ref.url, context);
}

export function openCaseWriter(ref: StoreRef, context: StoreContext): Promise<Opened<CaseWriter>> {
  const open = ref.kind.cases?.openWriter;
  if (!open) {
    throw new StoreError(
      `${displayStore(ref)} cannot be written; cases are written to ${formsFor('cases', (k) => Boolean(k.cases?.openWriter))}`,
    );
  }
  return open(ref.url, context);
}

export function openAccessDirectory(ref: StoreRef, context: StoreContext): Promise<Opened<AccessDirectory>> {
  const role = ref.kind.access;
  if (!role) throw new StoreError(`${displayStore(ref)} cannot hold clients`);
  return role.open(ref.url, context);
}

export function openAccessAdministration(
  ref: StoreRef,
  context: StoreContext,
): Promise<Opened<AccessDirectory & AccessAdministration>> {
  const open = ref.kind.access?.openAdmin;
  if (!open) {
    throw new StoreError(
      `the operator commands need a persistent access store: ${formsFor('access', (k) => Boolean(k.access?.openAdmin))}`,
    );
  }
  return open(ref.url, context);
}

export function openAuditLog(
  ref: StoreRef,
  context: StoreContext,
  options: { create: boolean },
): Promise<Opened<AuditLog>> {
  const role = ref.kind.audit;
  if (!role) throw new StoreError(`${displayStore(ref)} cannot hold the audit trail`);
  return role.open(ref.url, context, options);
}

export function openRateLimiter(ref: StoreRef, context: StoreContext): Promise<Opened<RateLimiter>> {
  const role = ref.kind.rateLimit;
  if (!role) throw new StoreError(`${displayStore(ref)} cannot count requests`);
  return role.open(ref.url, context);
}

/** The variables the stores read: what the CLI loads (with `loadSome`) to open a store. */
export const STORE_SETTINGS = [
  'CRN_PATTERN',
  'RATE_LIMIT_PREFIX',
  'RATE_LIMIT_TIMEOUT_MS',
  'RATE_LIMIT_ON_STORE_FAILURE',
  'UPSTREAM_CONNECTIONS',
  'UPSTREAM_TIMEOUT_MS',
  'UPSTREAM_RETRIES',
  'UPSTREAM_TLS_CERT',
  'UPSTREAM_TLS_KEY',
  'UPSTREAM_TLS_CA',
  'UPSTREAM_API_KEY_FILE',
  'UPSTREAM_BEARER_FILE',
  'UPSTREAM_TOKEN_URL',
  'UPSTREAM_CLIENT_ID',
  'UPSTREAM_CLIENT_SECRET_FILE',
] as const satisfies readonly (keyof StoreSettings)[];

/** The configuration the stores read (a subset of `Config`). */
export interface StoreSettings {
  readonly CRN_PATTERN: StoreContext['crnFormat'];
  readonly RATE_LIMIT_PREFIX: string;
  readonly RATE_LIMIT_TIMEOUT_MS: number;
  readonly RATE_LIMIT_ON_STORE_FAILURE: StoreContext['rateLimit']['onStoreFailure'];
  readonly UPSTREAM_CONNECTIONS: number;
  readonly UPSTREAM_TIMEOUT_MS: number;
  readonly UPSTREAM_RETRIES: number;
  readonly UPSTREAM_TLS_CERT?: string | undefined;
  readonly UPSTREAM_TLS_KEY?: string | undefined;
  readonly UPSTREAM_TLS_CA?: string | undefined;
  readonly UPSTREAM_API_KEY_FILE?: string | undefined;
  readonly UPSTREAM_BEARER_FILE?: string | undefined;
  readonly UPSTREAM_TOKEN_URL?: string | undefined;
  readonly UPSTREAM_CLIENT_ID?: string | undefined;
  readonly UPSTREAM_CLIENT_SECRET_FILE?: string | undefined;
}

const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };

/** What the stores need from the configuration, and where they log (for `serve` and the CLI). */
export function storeContextOf(
  config: StoreSettings,
  log: StoreContext['log'],
  onTransition?: (to: 'store' | 'fallback') => void,
  observeUpstream?: StoreContext['observeUpstream'],
): StoreContext {
  return {
    crnFormat: config.CRN_PATTERN,
    log,
    upstream: {
      connections: config.UPSTREAM_CONNECTIONS,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      retries: config.UPSTREAM_RETRIES,
      ...defined({
        tlsCertFile: config.UPSTREAM_TLS_CERT,
        tlsKeyFile: config.UPSTREAM_TLS_KEY,
        tlsCaFile: config.UPSTREAM_TLS_CA,
        apiKeyFile: config.UPSTREAM_API_KEY_FILE,
        bearerFile: config.UPSTREAM_BEARER_FILE,
        tokenUrl: config.UPSTREAM_TOKEN_URL,
        clientId: config.UPSTREAM_CLIENT_ID,
        clientSecretFile: config.UPSTREAM_CLIENT_SECRET_FILE,
      }),
    },
    ...(observeUpstream ? { observeUpstream } : {}),
    rateLimit: {
      prefix: config.RATE_LIMIT_PREFIX,
      timeoutMs: config.RATE_LIMIT_TIMEOUT_MS,
      onStoreFailure: config.RATE_LIMIT_ON_STORE_FAILURE,
      local: () => new InMemoryRateLimiter(),
      ...(onTransition ? { onTransition } : {}),
    },
  };
}
