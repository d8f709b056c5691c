import type { CrnFormat } from '../domain/crn.js';
import type { AccessAdministration, AccessDirectory } from './access-directory.js';
import type { AuditLog } from './audit-log.js';
import type { CaseRepository, CaseWriter } from './case-repository.js';
import type { RateLimiter } from './rate-limiter.js';
import type { OutgoingTracing } from './tracing.js';

/**
 * Store kinds: how a store named by a URL (`sqlite:PATH`, `postgres://…`, …) is recognised,
 * configured and opened. Each adapter folder that holds state exports one {@link StoreKind},
 * which describes itself whole: its URL form, its own settings (variables, defaults and the
 * checks between them), its masked display and the roles it can open. The composition root
 * lists the kinds (`src/app/composition/store-kinds.ts`); adding a store technology is one
 * adapter folder plus one line there (the recipe: docs/architecture "How to add a store
 * kind"). How every store fails is one convention: `store-errors.ts`.
 */

/**
 * A store cannot be opened or used as asked; the message says what to do and holds no secret
 * (the store error convention: `store-errors.ts`).
 */
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
  /** The TLS files it reads, when it has any to reload. */
  readonly tls?: ReloadableTls;
}

/** A certificate in use, as the reload log line and the expiry metrics show it. */
export interface CertificateInUse {
  /** The subject's common name, or the whole subject when it has none. */
  readonly subject: string;
  /** As the service writes a serial everywhere (upper-case hex, no leading zeros). */
  readonly serialNumber: string;
  readonly notAfter: Date;
}

/**
 * TLS files a store reads (the upstream's client certificate and CA), which can be reloaded
 * without a restart when they change on disk or on SIGHUP.
 */
export interface ReloadableTls {
  /** What the expiry metric calls its certificate, e.g. `upstream-client`. */
  readonly name: string;
  /** The paths read, watched for a change. */
  readonly files: readonly string[];
  /** The client certificate in use, if the store presents one. */
  current(): CertificateInUse | undefined;
  /**
   * Reads the files again (without blocking the event loop, where it returns a promise),
   * checks them and uses them for new connections. Throws or rejects, keeping the files in
   * use, when they are not usable; the message names the variable at fault.
   */
  reload(): CertificateInUse | undefined | Promise<CertificateInUse | undefined>;
}

/** The process environment, as configuration is read from it. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** One variable a store kind reads, for `config check` and the CLI's usage text. */
export interface StoreVariable {
  readonly name: string;
  /** Its default as written in the environment; absent when it has none. */
  readonly fallback?: string;
  /** Whether its value must never be shown (a secret, or a URL that may carry one). */
  readonly secret?: boolean;
}

/**
 * A store kind's own settings. `read` validates every variable it names (an empty one counts
 * as unset) and the checks between them; each problem starts with the variable it is about
 * (`UPSTREAM_TLS_KEY: …`). The settings it returns are plain data.
 */
export interface StoreSettingsReader<S> {
  readonly variables: readonly StoreVariable[];
  read(env: Environment): { readonly settings: S } | { readonly problems: readonly string[] };
}

/** What a failing rate-limit store is replaced by while it is down. */
export type RateLimitFailureMode = 'local' | 'allow' | 'deny';

/** A structured log line; the store kinds log transitions (an engine lost, an engine back). */
export type StoreLog = (
  level: 'info' | 'warn' | 'error',
  fields: Record<string, unknown>,
  message: string,
) => void;

/** One upstream call, for the metrics: how it ended and how long it took. */
export type UpstreamOutcome =
  | 'ok'
  | 'not-found'
  | 'limited-access'
  | 'timeout'
  | '5xx'
  | 'invalid-body'
  | 'refused-by-upstream'
  | 'connection'
  | 'circuit-open';

/**
 * A failure of an access store's change listener (a metric): a connection or reconnection that
 * could not be made, one that ended, one that stopped answering. While it is down the store's
 * cache is not used.
 */
export type AccessListenerFailure = 'connect-failed' | 'lost' | 'silent';

/** What every store is opened with, whatever its kind: the service's wiring, not a kind's settings. */
export interface StoreWiring {
  readonly crnFormat: CrnFormat;
  readonly log: StoreLog;
  /** Counts each upstream call (a metric). */
  readonly observeUpstream?: (outcome: UpstreamOutcome, seconds: number) => void;
  /** The in-process limiter a shared rate-limit store falls back to, supplied by the composition root. */
  readonly localRateLimiter: () => RateLimiter;
  /** Counts each switch of a rate-limit store to and from its failure mode (a metric). */
  readonly onRateLimitTransition?: (to: 'store' | 'fallback') => void;
  /** Counts each failure of an access store's change listener (a metric). */
  readonly onAccessListenerFailure?: (failure: AccessListenerFailure) => void;
  /** Spans for calls to another service (the upstream), when tracing is on. */
  readonly tracing?: OutgoingTracing;
  /**
   * `REQUEST_DEADLINE_MS`, for `serve`: an engine's own timeout (a statement timeout) need
   * be no longer, since no request waits longer. Absent for the operator's commands.
   */
  readonly requestDeadlineMs?: number;
}

/** What one kind's store is opened with: the wiring, and that kind's own settings. */
export interface StoreContext<S> extends StoreWiring {
  readonly settings: S;
}

/**
 * What `stores migrate` found and left: a store's schema version before and after. Version 0
 * is a store that does not exist, which is not created.
 */
export interface SchemaMigration {
  readonly before: number;
  readonly after: number;
  /** The version this release knows; `after` is above it when a newer release migrated the store and says this one can use it. */
  readonly current: number;
}

/** How far a hop's TLS goes: none, encrypted only, the chain, or the chain and the host name. */
export type TlsAssurance = 'none' | 'encrypted' | 'verify-ca' | 'verify-full';

/**
 * The network hop to a store, for `config check` and the production posture (decisions §17).
 * A store on this host's disk or in memory has none.
 */
export interface StoreHop {
  /** `HOST:PORT`, as the URL names it. */
  readonly to: string;
  /** Whether the host is this machine's loopback (the hop never leaves it). */
  readonly loopback: boolean;
  readonly tls: TlsAssurance;
  /** What to change so that the hop is encrypted and verified. */
  readonly fix: string;
}

/** The settings of a kind that reads no variables of its own. */
export type NoSettings = Readonly<Record<string, never>>;

/** One store technology and the roles it can play. A role it cannot play is absent. */
export interface StoreKind<S> {
  /** e.g. `sqlite`; the first kind whose `recognises` is true owns the URL. */
  readonly name: string;
  /** How it is written, for messages and the usage text, e.g. `sqlite:PATH`. */
  readonly form: string;
  recognises(url: string): boolean;
  /**
   * What is wrong with the URL, or with the URL and the kind's settings together (undefined
   * when the settings could not be read), or undefined when it is well formed.
   */
  problem(url: string, settings?: S): string | undefined;
  /** The URL as it may be shown: any password masked. */
  display(url: string): string;
  /** Its own variables. */
  readonly settings: StoreSettingsReader<S>;
  /** The hop to a store at `url` (undefined settings: they could not be read). Absent: its stores never leave this host. */
  hop?(url: string, settings?: S): StoreHop;

  readonly cases?: {
    /** For `serve`: read-only where the engine allows; refuses an older schema, naming the command that migrates it. */
    open(url: string, context: StoreContext<S>): Promise<Opened<CaseRepository>>;
    /** For `cases import` and `cases generate`: created and migrated if needed. Absent: it accepts no case writes. */
    openWriter?(url: string, context: StoreContext<S>): Promise<Opened<CaseWriter>>;
    /**
     * The store decides limited access itself (a system of record): it holds no rules to
     * show, and refuses readers on its own terms. Absent: it holds each case's rules.
     */
    readonly decidesLimitedAccess?: true;
    /**
     * For `stores migrate`: brings the store's schema to this release's version, applying only
     * the pending migrations, in one transaction under a lock that serialises two migrators; a
     * store that does not exist is left so. Absent: the store keeps no schema.
     */
    migrate?(url: string, context: StoreContext<S>): Promise<SchemaMigration>;
  };
  readonly access?: {
    open(url: string, context: StoreContext<S>): Promise<Opened<AccessDirectory>>;
    /** For the operator commands: created and migrated if needed. */
    openAdmin?(
      url: string,
      context: StoreContext<S>,
    ): Promise<Opened<AccessDirectory & AccessAdministration>>;
    /**
     * For `stores migrate`: brings the store's schema to this release's version, applying only
     * the pending migrations, in one transaction under a lock that serialises two migrators; a
     * store that does not exist is left so. Absent: the store keeps no schema.
     */
    migrate?(url: string, context: StoreContext<S>): Promise<SchemaMigration>;
  };
  readonly audit?: {
    /**
     * `create`: for `serve`, which creates (and migrates) the store and appends to it.
     * Without it the store must exist, and is opened for the audit commands, which only read.
     */
    open(url: string, context: StoreContext<S>, options: { create: boolean }): Promise<Opened<AuditLog>>;
    /**
     * For `stores migrate`: brings the store's schema to this release's version, applying only
     * the pending migrations, in one transaction under a lock that serialises two migrators; a
     * store that does not exist is left so. Absent: the store keeps no schema.
     */
    migrate?(url: string, context: StoreContext<S>): Promise<SchemaMigration>;
  };
  readonly rateLimit?: {
    open(url: string, context: StoreContext<S>): Promise<Opened<RateLimiter>>;
  };
}

export type StoreRole = 'cases' | 'access' | 'audit' | 'rateLimit';
