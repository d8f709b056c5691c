/**
 * Domain errors. Each has a stable `code` that adapters map to their own vocabulary
 * (HTTP status and problem type, CLI exit status). Messages never carry secrets and are
 * safe to show a client.
 */

export type DomainErrorCode =
  | 'INVALID_CRN'
  | 'CASE_NOT_FOUND'
  | 'COMMUNITY_MANAGER_NOT_FOUND'
  | 'ACCESS_DENIED'
  | 'UNAUTHENTICATED'
  | 'ON_BEHALF_OF_NOT_ALLOWED'
  | 'PERMISSION_DENIED'
  | 'LIMITED_ACCESS'
  | 'NO_QUEUE_CONFIGURED'
  | 'UPSTREAM_FAILED'
  | 'UPSTREAM_TIMEOUT'
  | 'RATE_LIMITED'
  | 'STORE_UNAVAILABLE'
  | 'INVALID_PAGINATION'
  | 'CERTIFICATE_REQUEST_REFUSED'
  | 'ALREADY_RENEWED'
  | 'RENEW_TOO_EARLY'
  | 'RENEWAL_NOT_CONFIGURED'
  | 'INVALID_SUBJECT_ACCESS_REQUEST'
  | 'TRAIL_INCOMPLETE';

export abstract class DomainError extends Error {
  abstract readonly code: DomainErrorCode;
  constructor(message: string) {
    super(message);
    // The class's own name (`CaseNotFoundError`, ...), set once here for every subclass.
    this.name = new.target.name;
  }
}

export class InvalidCrnError extends DomainError {
  readonly code = 'INVALID_CRN';
  constructor(readonly reason: string) {
    super(`crn is not valid: ${reason}`);
  }
}

export class CaseNotFoundError extends DomainError {
  readonly code = 'CASE_NOT_FOUND';
  constructor(readonly crn: string) {
    super(`no case is held for crn ${crn}`);
  }
}

export class CommunityManagerNotFoundError extends DomainError {
  readonly code = 'COMMUNITY_MANAGER_NOT_FOUND';
  constructor(readonly crn: string) {
    super(`case ${crn} has no active community manager`);
  }
}

/**
 * Why the perimeter refused a client (decisions §1 steps 3 and 4). The reason is for the
 * operator's log and audit; the client is told only which of the broad kinds it was.
 */
export type AccessDeniedReason =
  | 'missing-key'
  | 'malformed-key'
  | 'unknown-key'
  | 'wrong-key'
  | 'revoked-key'
  | 'expired-key'
  | 'key-of-another-client'
  | 'unknown-client'
  | 'suspended-client'
  | 'revoked-certificate';

const CLIENT_REASONS: readonly AccessDeniedReason[] = [
  'unknown-client',
  'suspended-client',
  'revoked-certificate',
];

export class AccessDeniedError extends DomainError {
  readonly code = 'ACCESS_DENIED';
  /** `key`: the API key failed (step 3); `client`: the client may not call (step 4). */
  readonly kind: 'key' | 'client';
  constructor(readonly reason: AccessDeniedReason) {
    const kind = CLIENT_REASONS.includes(reason) ? 'client' : 'key';
    super(
      kind === 'client'
        ? 'this client is not allowed to call the service'
        : 'the API key is missing or invalid',
    );
    this.kind = kind;
  }
}

/** A bearer or on-behalf-of token is missing or does not verify (401). */
export class UnauthenticatedError extends DomainError {
  readonly code = 'UNAUTHENTICATED';
  constructor(
    readonly scheme: 'bearer' | 'on-behalf-of',
    /** Safe to show the client: says what failed, never the token or key material. */
    readonly reason: string,
    readonly missing = false,
  ) {
    super(`${scheme === 'bearer' ? 'bearer token' : 'on-behalf-of token'}: ${reason}`);
  }
}

/** An on-behalf-of token sent by a client configured not to send one (400). */
export class OnBehalfOfNotAllowedError extends DomainError {
  readonly code = 'ON_BEHALF_OF_NOT_ALLOWED';
  constructor() {
    super('this client is not configured to act on behalf of a user; do not send X-On-Behalf-Of');
  }
}

export class PermissionDeniedError extends DomainError {
  readonly code = 'PERMISSION_DENIED';
  constructor(readonly permission: string) {
    super(`permission ${permission} is not granted to this caller`);
  }
}

/**
 * The case is limited access and this reader may not see it (decisions §8): excluded, or
 * not named by its restriction, or a client acting as itself set to `deny`. The message is
 * the case's own (or a generic one) and never names another user.
 */
export class LimitedAccessError extends DomainError {
  readonly code = 'LIMITED_ACCESS';
  constructor(
    /** `refused-upstream`: the system of record decided (its reason is its own). */
    readonly outcome: 'excluded' | 'restricted' | 'refused-upstream',
    message: string,
  ) {
    super(message);
  }
}

/** `POST /token` for a client with no queue (or no role to reach it) configured (403). */
export class NoQueueConfiguredError extends DomainError {
  readonly code = 'NO_QUEUE_CONFIGURED';
  constructor() {
    super('no queue is configured for this client');
  }
}

/**
 * A service this one depends on failed (502) or did not answer in time (504). `logLabel` is a
 * short, safe label for the operator's log (e.g. an STS error code), and `mismatch`, for an
 * answer that did not fit, the field and the reason (never the value); the client is told
 * none of them, nor anything the upstream said.
 */
export class UpstreamFailedError extends DomainError {
  readonly code = 'UPSTREAM_FAILED';
  constructor(
    readonly upstream: string,
    readonly logLabel: string,
    readonly mismatch?: { readonly field: string; readonly reason: string },
  ) {
    super(`the ${upstream} failed; try again later`);
  }
}

export class UpstreamTimeoutError extends DomainError {
  readonly code = 'UPSTREAM_TIMEOUT';
  constructor(readonly upstream: string) {
    super(`the ${upstream} did not answer in time; try again later`);
  }
}

/**
 * A store this service reads or writes (database, Redis) failed or did not answer within
 * its timeout (503). `store` names which, for the operator; the client learns only that
 * the service cannot answer now. The engine's own message never reaches the client.
 */
export class StoreUnavailableError extends DomainError {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(
    readonly store: string,
    readonly logLabel: string,
  ) {
    super('the service cannot reach its data store; try again shortly');
  }
}

/** Too many requests for this API key in the current window (429). */
export class RateLimitedError extends DomainError {
  readonly code = 'RATE_LIMITED';
  constructor(
    readonly decision: {
      readonly limit: number;
      readonly remaining: number;
      readonly resetMs: number;
      readonly windowMs: number;
    },
  ) {
    super(
      `rate limit of ${decision.limit} requests per ${decision.windowMs / 1000} s exceeded; retry after the window resets`,
    );
  }

  /** Whole seconds to wait, at least 1. */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.decision.resetMs / 1000));
  }
}

export class InvalidPaginationError extends DomainError {
  readonly code = 'INVALID_PAGINATION';
  constructor(readonly reason: string) {
    super(`pagination is not valid: ${reason}`);
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** A certificate request that cannot be granted as asked (decisions §12): 400, nothing issued. */
export class CertificateRequestRefusedError extends DomainError {
  readonly code = 'CERTIFICATE_REQUEST_REFUSED';
  constructor(reason: string) {
    super(reason);
  }
}

/** The presented certificate was renewed once already: each renews once (409). */
export class AlreadyRenewedError extends DomainError {
  readonly code = 'ALREADY_RENEWED';
  constructor() {
    super('this certificate has been renewed already; renew with the certificate issued then');
  }
}

/** The presented certificate is not yet inside its renewal window (409). */
export class RenewTooEarlyError extends DomainError {
  readonly code = 'RENEW_TOO_EARLY';
  constructor(
    readonly notAfter: Date | null,
    readonly withinDays: number,
  ) {
    super(
      notAfter === null
        ? 'the presented certificate has no known end, so it cannot be renewed here'
        : `this certificate can be renewed from ${withinDays} days before it expires (${notAfter.toISOString()})`,
    );
  }
}

/** No certificate issuer is configured (`CLIENT_CERT_ISSUER=none`): 501. */
export class RenewalNotConfiguredError extends DomainError {
  readonly code = 'RENEWAL_NOT_CONFIGURED';
  constructor() {
    super('certificate renewal is not offered by this service; ask the operator');
  }
}

/** A subject access request's parameters are not well formed (400); `parameter` names the one at fault. */
export class InvalidSubjectAccessRequestError extends DomainError {
  readonly code = 'INVALID_SUBJECT_ACCESS_REQUEST';
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The audit trail could not be read whole, or a record of it did not verify (decisions §22):
 * a subject access request is answered complete or not at all (503). `reason` is for the
 * operator's log, never the client's answer.
 */
export class TrailIncompleteError extends DomainError {
  readonly code = 'TRAIL_INCOMPLETE';
  constructor(readonly reason: string) {
    super('the audit trail could not be read whole, so nothing is answered; try again later');
  }
}
