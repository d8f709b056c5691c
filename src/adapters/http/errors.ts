import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  AccessDeniedError,
  type DomainError,
  type DomainErrorCode,
  isDomainError,
  type RateLimitedError,
  type StoreUnavailableError,
  type TrailIncompleteError,
  type UnauthenticatedError,
  UpstreamFailedError,
  UpstreamTimeoutError,
} from '../../domain/errors.js';
import { CertificateIssuerError } from '../../ports/certificate-issuer.js';
import { CertificateRequestError } from '../../ports/certificate-requests.js';
import type { AppEnv, HttpLogger } from './env.js';
import { type ProblemInput, ProblemType, type ProblemTypeUri, problemResponse } from './problem.js';

const REALM = 'case-read-service';
const ISSUER = 'certificate issuer';

/** RFC 6750 challenge: no error code when no credentials were sent; `invalid_token` otherwise. */
function challengeFor(error: UnauthenticatedError): string {
  if (error.missing) return `Bearer realm="${REALM}"`;
  return `Bearer realm="${REALM}", error="invalid_token", error_description="${error.message.replaceAll('"', "'")}"`;
}

function headersForDomainError(error: DomainError): Record<string, string> {
  if (error.code === 'UNAUTHENTICATED')
    return { 'WWW-Authenticate': challengeFor(error as UnauthenticatedError) };
  if (error.code === 'RATE_LIMITED')
    return { 'Retry-After': String((error as RateLimitedError).retryAfterSeconds) };
  if (error.code === 'STORE_UNAVAILABLE' || error.code === 'UPSTREAM_TIMEOUT') return { 'Retry-After': '1' };
  return {};
}

/** A problem but its detail: `[status, type, title]`. */
type Kind = readonly [ContentfulStatusCode, ProblemTypeUri, string];

/**
 * Each domain error's problem but its detail, which is the error's message: a row each, its
 * status, type and title. A refused client (`ACCESS_DENIED` of kind `client`) has a problem
 * of its own ({@link CLIENT_NOT_ALLOWED}).
 */
const PROBLEMS: { readonly [C in DomainErrorCode]: Kind } = {
  INVALID_CRN: [400, ProblemType.invalidCrn, 'Invalid crn'],
  CASE_NOT_FOUND: [404, ProblemType.caseNotFound, 'Case not found'],
  COMMUNITY_MANAGER_NOT_FOUND: [404, ProblemType.communityManagerNotFound, 'Community manager not found'],
  ACCESS_DENIED: [403, ProblemType.accessDenied, 'Forbidden'],
  UNAUTHENTICATED: [401, ProblemType.unauthenticated, 'Unauthorized'],
  ON_BEHALF_OF_NOT_ALLOWED: [400, ProblemType.onBehalfOfNotAllowed, 'On-behalf-of not allowed'],
  PERMISSION_DENIED: [403, ProblemType.permissionDenied, 'Permission denied'],
  // The case's own message (or a generic one): it never names another user.
  LIMITED_ACCESS: [403, ProblemType.limitedAccess, 'Limited access'],
  RATE_LIMITED: [429, ProblemType.rateLimited, 'Too many requests'],
  INVALID_PAGINATION: [400, ProblemType.invalidRequest, 'Invalid request'],
  NO_QUEUE_CONFIGURED: [403, ProblemType.noQueueConfigured, 'No queue configured'],
  STORE_UNAVAILABLE: [503, ProblemType.storeUnavailable, 'Service unavailable'],
  UPSTREAM_FAILED: [502, ProblemType.upstreamFailed, 'Bad gateway'],
  CERTIFICATE_REQUEST_REFUSED: [400, ProblemType.badCertificateRequest, 'Bad certificate request'],
  ALREADY_RENEWED: [409, ProblemType.alreadyRenewed, 'Already renewed'],
  RENEW_TOO_EARLY: [409, ProblemType.renewTooEarly, 'Too early to renew'],
  RENEWAL_NOT_CONFIGURED: [501, ProblemType.renewalNotConfigured, 'Renewal not configured'],
  INVALID_SUBJECT_ACCESS_REQUEST: [400, ProblemType.invalidRequest, 'Invalid request'],
  TRAIL_INCOMPLETE: [503, ProblemType.trailUnavailable, 'Service unavailable'],
  UPSTREAM_TIMEOUT: [504, ProblemType.upstreamTimeout, 'Gateway timeout'],
};

/** An `ACCESS_DENIED` of kind `client`: the caller's key is good, but its client may not call (step 4). */
const CLIENT_NOT_ALLOWED: Kind = [403, ProblemType.clientNotAllowed, 'Client not allowed'];

/** The problem of `kind`, with `detail`. */
const problemOf = ([status, type, title]: Kind, detail: string): ProblemInput => ({
  status,
  type,
  title,
  detail,
});

export function problemForDomainError(error: DomainError): ProblemInput {
  const refusedClient = error instanceof AccessDeniedError && error.kind === 'client';
  return problemOf(refusedClient ? CLIENT_NOT_ALLOWED : PROBLEMS[error.code], error.message);
}

/**
 * The app's error handler: a domain error becomes its problem+json (refusals and engine
 * failures logged with their reason for the operator, never sent to the client); a
 * framework 4xx a generic invalid-request problem; anything else a 500 that names only the
 * request id.
 */
export function errorHandler(logger: HttpLogger) {
  const handle = (error: Error, c: Context<AppEnv>): Response => {
    // The certificate ports' own errors (decisions §12), as the client is to read them.
    if (error instanceof CertificateRequestError) {
      return problemResponse(
        c,
        error.problem === 'too-large'
          ? {
              status: 413,
              type: ProblemType.requestTooLarge,
              title: 'Request too large',
              detail: error.message,
            }
          : problemOf(PROBLEMS.CERTIFICATE_REQUEST_REFUSED, error.message),
      );
    }
    if (error instanceof CertificateIssuerError) {
      return handle(
        error.timedOut ? new UpstreamTimeoutError(ISSUER) : new UpstreamFailedError(ISSUER, error.label),
        c,
      );
    }
    if (isDomainError(error)) {
      if (
        error.code === 'ACCESS_DENIED' ||
        error.code === 'UNAUTHENTICATED' ||
        error.code === 'PERMISSION_DENIED' ||
        error.code === 'ON_BEHALF_OF_NOT_ALLOWED'
      ) {
        // The precise reason is for the operator; the client gets only the broad kind.
        logger.info(
          {
            requestId: c.get('requestId'),
            client: c.get('auditedAs')?.clientId ?? null,
            code: error.code,
            reason: error.code === 'ACCESS_DENIED' ? (error as AccessDeniedError).reason : error.message,
          },
          'request refused',
        );
      }
      if (error.code === 'STORE_UNAVAILABLE') {
        logger.error(
          {
            requestId: c.get('requestId'),
            code: error.code,
            store: (error as StoreUnavailableError).store,
            label: (error as StoreUnavailableError).logLabel,
          },
          'store unavailable',
        );
      }
      if (error.code === 'TRAIL_INCOMPLETE') {
        // Why the trail could not be read whole is the operator's to act on (decisions §22).
        logger.error(
          { requestId: c.get('requestId'), code: error.code, reason: (error as TrailIncompleteError).reason },
          'subject access request not answered: the audit trail could not be read whole',
        );
      }
      if (error.code === 'UPSTREAM_FAILED' || error.code === 'UPSTREAM_TIMEOUT') {
        logger.error(
          {
            requestId: c.get('requestId'),
            client: c.get('auditedAs')?.clientId ?? null,
            code: error.code,
            upstream: (error as UpstreamFailedError).upstream,
            label: (error as Partial<UpstreamFailedError>).logLabel ?? 'timeout',
            ...(error instanceof UpstreamFailedError ? error.mismatch : undefined),
          },
          'upstream failure',
        );
      }
      return problemResponse(c, problemForDomainError(error), headersForDomainError(error));
    }
    if (error instanceof HTTPException && error.status < 500) {
      return problemResponse(c, {
        status: error.status,
        type: ProblemType.invalidRequest,
        title: 'Invalid request',
        detail: 'the request could not be processed',
      });
    }
    logger.error(
      {
        requestId: c.get('requestId'),
        route: c.req.routePath,
        err: { name: error.name, message: error.message },
      },
      'unhandled error',
    );
    return problemResponse(c, {
      status: 500,
      type: ProblemType.internal,
      title: 'Internal error',
      detail: 'an unexpected error occurred; quote the requestId to the operator',
    });
  };
  return handle;
}
