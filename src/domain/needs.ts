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
 * imports nothing outside `src/domain`; `src/ports` builds the adapter-facing interfaces on
 * these, and adapters implement the ports.
 *
 * Every method answers `undefined` when no case is held for the crn.
 */
export interface CaseReader {
  findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined>;
  findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined>;
  /**
   * `{ communityManager: null }` when the case is held but has no active community manager;
   * `undefined` when no case is held.
   */
  findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined>;
  /** Every risk assessment held for the case, in any order; `[]` when none. */
  findRiskScores(crn: Crn): Promise<RiskPredictorScore[] | undefined>;
}

/** Clients, keys, grants and revocations, as the perimeter reads them on every request. */
export interface AccessReader {
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

/** Verifies tokens. Both methods throw `UnauthenticatedError` with a safe reason. */
export interface TokenVerifier {
  verifyBearer(token: string): Promise<BearerClaims>;
  /** Verifies an on-behalf-of token with the client's own settings; returns the user's e-mail. */
  verifyOnBehalfOf(token: string, settings: OnBehalfOfSettings): Promise<{ email: string }>;
}

export interface Clock {
  now(): Date;
}

/** Issues temporary queue credentials. Throws `UpstreamFailedError` or `UpstreamTimeoutError`. */
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
