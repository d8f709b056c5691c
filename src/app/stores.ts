import type { AccessAdministration, AccessDirectory } from '../ports/access-directory.js';
import type { AuditLog } from '../ports/audit-log.js';
import type { CaseRepository, CaseWriter } from '../ports/case-repository.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import {
  type Environment,
  type Opened,
  type SchemaMigration,
  StoreError,
  type StoreHop,
  type StoreKind,
  type StoreRole,
  type StoreVariable,
  type StoreWiring,
} from '../ports/stores.js';

/**
 * A store as configuration names it: plain data. `kind` is the name of the store kind that
 * recognised `url`, and `settings` are what that kind's own reader made of the environment.
 * Only the registry below opens it.
 */
export interface StoreRef {
  readonly role: StoreRole;
  readonly kind: string;
  readonly url: string;
  readonly settings: unknown;
}

/**
 * The registry's view of a kind: any kind, whatever its settings. (A kind's roles take their
 * settings as a method parameter, so a `StoreKind<UpstreamSettings>` is one of these; each
 * ref's settings were read by the reader of the kind it names.)
 */
export type AnyStoreKind = StoreKind<unknown>;

const ROLE_NAMES: Record<StoreRole, string> = {
  cases: 'a case store',
  access: 'an access store',
  audit: 'an audit store',
  rateLimit: 'a rate-limit store',
};

const orList = (forms: readonly string[]) =>
  forms.length <= 1 ? (forms[0] ?? '(none)') : `${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}`;

/**
 * The store kinds the service knows, and everything done with them: which kind owns a
 * URL, what each kind's settings are, how a store is shown, and how each role opens. It
 * holds no adapter of its own: the composition root hands it the kinds.
 */
export class StoreRegistry {
  constructor(readonly kinds: readonly AnyStoreKind[]) {}

  /** The forms accepted for a role, for messages and the usage text: `memory or sqlite:PATH`. */
  formsFor(role: StoreRole, need: (kind: AnyStoreKind) => boolean = (k) => k[role] !== undefined): string {
    return orList(this.kinds.filter(need).map((k) => k.form));
  }

  /** Whether `cases import` and `cases generate` can write to the store. */
  acceptsCaseWrites(ref: StoreRef): boolean {
    return this.kindOf(ref).cases?.openWriter !== undefined;
  }

  /** Whether the store decides limited access itself (it holds no rules to show). */
  decidesLimitedAccess(ref: StoreRef): boolean {
    return this.kindOf(ref).cases?.decidesLimitedAccess === true;
  }

  /** The forms `cases import` and `cases generate` write to. */
  caseWriterForms(): string {
    return this.formsFor('cases', (k) => k.cases?.openWriter !== undefined);
  }

  /** Every kind's own variables, in registry order. */
  variables(): readonly StoreVariable[] {
    return this.kinds.flatMap((k) => k.settings.variables);
  }

  /**
   * Every kind's settings read from `env`. All are validated, whichever kinds are in use, so
   * a bad variable is reported the same way whatever the stores are.
   */
  readSettings(env: Environment): { byKind: ReadonlyMap<string, unknown>; problems: readonly string[] } {
    const byKind = new Map<string, unknown>();
    const problems: string[] = [];
    for (const kind of this.kinds) {
      const read = kind.settings.read(env);
      if ('problems' in read) problems.push(...read.problems);
      else byKind.set(kind.name, read.settings);
    }
    return { byKind, problems };
  }

  /** The store `url` names for `role`, with its kind's settings; the error names what is accepted. */
  refOf(
    role: StoreRole,
    url: string,
    settings: ReadonlyMap<string, unknown>,
  ): StoreRef | { readonly error: string } {
    const kind = this.kinds.find((k) => k.recognises(url));
    if (kind === undefined) return { error: `expected ${this.formsFor(role)}` };
    if (kind[role] === undefined) {
      return { error: `${kind.name} cannot hold ${ROLE_NAMES[role]}; expected ${this.formsFor(role)}` };
    }
    const problem = kind.problem(url, settings.get(kind.name));
    return problem === undefined
      ? { role, kind: kind.name, url, settings: settings.get(kind.name) }
      : { error: problem };
  }

  /** The store as it may be shown in logs and `config check`: any password masked. */
  display(ref: StoreRef): string {
    return this.kindOf(ref).display(ref.url);
  }

  /** The network hop to the store; undefined for one on this host's disk or in memory. */
  hop(ref: StoreRef): StoreHop | undefined {
    return this.kindOf(ref).hop?.(ref.url, ref.settings);
  }

  openCaseRepository(ref: StoreRef, wiring: StoreWiring): Promise<Opened<CaseRepository>> {
    const kind = this.kindOf(ref);
    if (!kind.cases) throw new StoreError(`${this.display(ref)} cannot hold cases`);
    return kind.cases.open(ref.url, { ...wiring, settings: ref.settings });
  }

  openCaseWriter(ref: StoreRef, wiring: StoreWiring): Promise<Opened<CaseWriter>> {
    const kind = this.kindOf(ref);
    if (!kind.cases?.openWriter) {
      throw new StoreError(
        `${this.display(ref)} cannot be written; cases are written to ${this.caseWriterForms()}`,
      );
    }
    return kind.cases.openWriter(ref.url, { ...wiring, settings: ref.settings });
  }

  openAccessDirectory(ref: StoreRef, wiring: StoreWiring): Promise<Opened<AccessDirectory>> {
    const kind = this.kindOf(ref);
    if (!kind.access) throw new StoreError(`${this.display(ref)} cannot hold clients`);
    return kind.access.open(ref.url, { ...wiring, settings: ref.settings });
  }

  openAccessAdministration(
    ref: StoreRef,
    wiring: StoreWiring,
  ): Promise<Opened<AccessDirectory & AccessAdministration>> {
    const kind = this.kindOf(ref);
    if (!kind.access?.openAdmin) {
      throw new StoreError(
        `the operator commands need a persistent access store: ${this.formsFor('access', (k) => k.access?.openAdmin !== undefined)}`,
      );
    }
    return kind.access.openAdmin(ref.url, { ...wiring, settings: ref.settings });
  }

  openAuditLog(ref: StoreRef, wiring: StoreWiring, options: { create: boolean }): Promise<Opened<AuditLog>> {
    const kind = this.kindOf(ref);
    if (!kind.audit) throw new StoreError(`${this.display(ref)} cannot hold the audit trail`);
    return kind.audit.open(ref.url, { ...wiring, settings: ref.settings }, options);
  }

  openRateLimiter(ref: StoreRef, wiring: StoreWiring): Promise<Opened<RateLimiter>> {
    const kind = this.kindOf(ref);
    if (!kind.rateLimit) throw new StoreError(`${this.display(ref)} cannot count requests`);
    return kind.rateLimit.open(ref.url, { ...wiring, settings: ref.settings });
  }

  /**
   * `stores migrate` on one store: its schema brought to this release's version. Undefined
   * when its kind keeps no schema for that role (memory, jsonl, an upstream, Redis).
   */
  migrate(ref: StoreRef, wiring: StoreWiring): Promise<SchemaMigration> | undefined {
    if (ref.role === 'rateLimit') return undefined;
    return this.kindOf(ref)[ref.role]?.migrate?.(ref.url, { ...wiring, settings: ref.settings });
  }

  private kindOf(ref: StoreRef): AnyStoreKind {
    const kind = this.kinds.find((k) => k.name === ref.kind);
    if (kind === undefined) throw new StoreError(`no store kind is named ${ref.kind}`);
    return kind;
  }
}
