import type { ApiKeyRecord, BearerClaims, Client, OnBehalfOfSettings } from './access/model.js';
import type { Permission } from './access/permissions.js';
import type { AuditRecord } from './audit/record.js';
import type { Crn } from './crn.js';
import type { QueueCredentials, QueueCredentialsRequest } from './queue/model.js';
import type {
  CommunityManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from './types.js';

/**
 * What the use cases need from the outside, said in the domain's own terms. The domain
 * imports nothing outside `src/domain`; each port in `src/ports` re-exports its interface
 * from here under the same single name, adds what only adapters and the CLI need, and
 * states the contract its suite in `test/contract` checks.
 */

/**
 * The case repository port: where case data is read from (fixtures in memory, a SQLite
 * file, PostgreSQL, an upstream system of record). Contract, checked by
 * `test/contract/case-repository.contract.ts`:
 *
 * - "not found" is `undefined`, never an exception; an exception means the store failed;
 * - optional values come back as `null`, never absent; lists as arrays, `[]` when empty;
 * - lists keep the order in which they were stored;
 * - date-times come back exactly as stored (ISO 8601 with offset);
 * - answers are fresh objects: a caller mutating one cannot change what the next caller sees.
 */
export interface CaseRepository {
  findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined>;
  /**
   * Optional: the same document as `findPersonalDetails`, as the JSON text to send. An
   * adapter that holds the text offers it, so the service need not parse and re-serialise
   * it; the contract suite checks that it parses to exactly what `findPersonalDetails` says.
   */
  findPersonalDetailsText?(crn: Crn): Promise<string | undefined>;
  findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined>;
  /**
   * `{ communityManager: null }` when the case is held but has no active community manager;
   * `undefined` when no case is held.
   */
  findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined>;
  /** Every risk assessment held for the case, in any order; `[]` when none. */
  findRiskScores(crn: Crn): Promise<RiskPredictorScore[] | undefined>;
}

/**
 * The access directory port, as the perimeter reads it on every request: clients, API keys,
 * user grants and revoked certificate serials (the CLI writes it through
 * `AccessAdministration`). Contract, checked by `test/contract/access-directory.contract.ts`:
 *
 * - a change is seen by the next read at once on the connection that made it, and on every
 *   instance within the bound the adapter states;
 * - client ids (certificate CNs) are matched exactly; e-mails case-insensitively;
 *   certificate serials as upper-case hex without leading zeros;
 * - only hashes of key secrets are ever stored;
 * - removing a client removes its keys and per-client revocations.
 */
export interface AccessDirectory {
  findClient(id: string): Promise<Client | undefined>;
  findApiKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** True when the serial is revoked globally or for this client. */
  isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean>;
  /** The permissions granted to a user, by e-mail (case-insensitive); [] when none. */
  grantsFor(email: string): Promise<readonly Permission[]>;
}

/** Checks a presented API key secret against the stored hash, in constant time. */
export interface SecretHasher {
  matches(secret: string, secretHash: string): boolean;
}

/**
 * Verifies bearer and on-behalf-of JWTs (adapter: jose). Contract: an algorithm allowlist
 * of asymmetric algorithms only (never `none`, never HS*), `iss`, `aud`, `exp` and `nbf`
 * with a small clock tolerance; every failure is an `UnauthenticatedError` whose reason
 * names what failed and never contains token material.
 */
export interface TokenVerifier {
  verifyBearer(token: string): Promise<BearerClaims>;
  /** Verifies an on-behalf-of token with the client's own settings; returns the user's e-mail. */
  verifyOnBehalfOf(token: string, settings: OnBehalfOfSettings): Promise<{ email: string }>;
}

export interface Clock {
  now(): Date;
}

/**
 * Issues temporary credentials for a consumer's queue (adapters: AWS STS, and a local
 * development issuer). Contract: the credentials are limited by the request's session
 * policy and expire after its duration; a failure of the upstream service is an
 * `UpstreamFailedError` (or `UpstreamTimeoutError`) carrying none of the upstream's text;
 * credentials never reach a log.
 */
export interface CredentialsIssuer {
  issue(request: QueueCredentialsRequest): Promise<QueueCredentials>;
}

/**
 * Appends audit records. Resolves once the record is durably stored; rejects (or throws)
 * when it cannot be kept, and the caller then fails closed.
 */
export interface AuditWriter {
  append(record: AuditRecord): void | Promise<void>;
}
