import type { CrnFormat } from '../domain/crn.js';
import type { AccessAdministration, AccessDirectory } from './access-directory.js';
import type { AuditLog } from './audit-log.js';
import type { CaseRepository, CaseWriter } from './case-repository.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * Store kinds: how the composition root and the CLI open a store named by a URL
 * (`sqlite:PATH`, `postgres://…`, `redis://…`, `memory`). Each adapter folder that holds
 * state exports one {@link StoreKind}; `src/app/stores.ts` lists them. Adding a store
 * technology is one adapter folder plus one line in that list.
 */

/** A store cannot be opened or used as asked; the message says what to do and holds no secret. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreError';
  }
}

/** An open store: the port it serves, a description for the start-up log, and its lifecycle. */
export interface Opened<T> {
  readonly value: T;
  /** What was opened, with any secret masked, e.g. `sqlite:./data/cases.db (read-only)`. */
  readonly description: string;
  /** Resolves when the store can serve; rejects when it cannot (for readiness). */
  ping(): Promise<void>;
  /** Writes anything pending, then releases the store. */
  close(): Promise<void>;
}

/** What a failing rate-limit store is replaced by while it is down. */
export type RateLimitFailureMode = 'local' | 'allow' | 'deny';

/** A structured log line; the store kinds log transitions (an engine lost, an engine back). */
export type StoreLog = (
  level: 'info' | 'warn' | 'error',
  fields: Record<string, unknown>,
  message: string,
) => void;

/** How the upstream-HTTP case store connects and authenticates (files hold the secrets). */
export interface UpstreamSettings {
  readonly connections: number;
  /** The whole call, retries included. */
  readonly timeoutMs: number;
  readonly retries: number;
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  readonly tlsCaFile?: string;
  readonly apiKeyFile?: string;
  readonly bearerFile?: string;
  readonly tokenUrl?: string;
  readonly clientId?: string;
  readonly clientSecretFile?: string;
}

/** One upstream call, for the metrics: how it ended and how long it took. */
export type UpstreamOutcome =
  | 'ok'
  | 'not-found'
  | 'timeout'
  | '5xx'
  | 'invalid-body'
  | 'refused-by-upstream'
  | 'connection'
  | 'circuit-open';

/** What a store may need beyond its URL, from the service's configuration. */
export interface StoreContext {
  readonly crnFormat: CrnFormat;
  readonly log: StoreLog;
  readonly upstream: UpstreamSettings;
  readonly observeUpstream?: (outcome: UpstreamOutcome, seconds: number) => void;
  readonly rateLimit: {
    readonly prefix: string;
    readonly timeoutMs: number;
    readonly onStoreFailure: RateLimitFailureMode;
    /** The in-process limiter used by the `local` failure mode, supplied by the composition root. */
    readonly local: () => RateLimiter;
    /** Counts each switch to and from the failure mode (a metric). */
    readonly onTransition?: (to: 'store' | 'fallback') => void;
  };
}

/** One store technology and the roles it can play. A role it cannot play is absent. */
export interface StoreKind {
  /** e.g. `sqlite`; the first kind whose `recognises` is true owns the URL. */
  readonly name: string;
  /** How it is written, for messages, e.g. `sqlite:PATH`. */
  readonly form: string;
  recognises(url: string): boolean;
  /** What is wrong with the URL, or undefined when it is well formed. */
  problem(url: string): string | undefined;
  /** The URL as it may be shown: any password masked. */
  display(url: string): string;

  readonly cases?: {
    /** For `serve`: read-only where the engine allows; refuses an older schema, naming the command that migrates it. */
    open(url: string, context: StoreContext): Promise<Opened<CaseRepository>>;
    /** For the CLI: created and migrated if needed. */
    openWriter?(url: string, context: StoreContext): Promise<Opened<CaseWriter>>;
  };
  readonly access?: {
    open(url: string, context: StoreContext): Promise<Opened<AccessDirectory>>;
    /** For the operator commands: created and migrated if needed. */
    openAdmin?(url: string, context: StoreContext): Promise<Opened<AccessDirectory & AccessAdministration>>;
  };
  readonly audit?: {
    /**
     * `create`: for `serve`, which creates (and migrates) the store and appends to it.
     * Without it the store must exist, and is opened for the audit commands, which only read.
     */
    open(url: string, context: StoreContext, options: { create: boolean }): Promise<Opened<AuditLog>>;
  };
  readonly rateLimit?: {
    open(url: string, context: StoreContext): Promise<Opened<RateLimiter>>;
  };
}

export type StoreRole = 'cases' | 'access' | 'audit' | 'rateLimit';
