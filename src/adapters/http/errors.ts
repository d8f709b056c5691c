import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import {
  type AccessDeniedError,
  type DomainError,
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
import { type ProblemInput, ProblemType, problemResponse } from './problem.js';

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

export function problemForDomainError(error: DomainError): ProblemInput {
  switch (error.code) {
    case 'INVALID_CRN':
      return { status: 400, type: ProblemType.invalidCrn, title: 'Invalid crn', detail: error.message };
    case 'CASE_NOT_FOUND':
      return { status: 404, type: ProblemType.caseNotFound, title: 'Case not found', detail: error.message };
    case 'COMMUNITY_MANAGER_NOT_FOUND':
      return {
        status: 404,
        type: ProblemType.communityManagerNotFound,
        title: 'Community manager not found',
        detail: error.message,
      };
    case 'ACCESS_DENIED':
      return (error as AccessDeniedError).kind === 'client'
        ? {
            status: 403,
            type: ProblemType.clientNotAllowed,
            title: 'Client not allowed',
            detail: error.message,
          }
        : { status: 403, type: ProblemType.accessDenied, title: 'Forbidden', detail: error.message };
    case 'UNAUTHENTICATED':
      return { status: 401, type: ProblemType.unauthenticated, title: 'Unauthorized', detail: error.message };
    case 'ON_BEHALF_OF_NOT_ALLOWED':
      return {
        status: 400,
        type: ProblemType.onBehalfOfNotAllowed,
        title: 'On-behalf-of not allowed',
        detail: error.message,
      };
    case 'PERMISSION_DENIED':
      return {
        status: 403,
        type: ProblemType.permissionDenied,
        title: 'Permission denied',
        detail: error.message,
      };
    case 'LIMITED_ACCESS':
      // The case's own message (or a generic one): it never names another user.
      return { status: 403, type: ProblemType.limitedAccess, title: 'Limited access', detail: error.message };
    case 'RATE_LIMITED':
      return {
        status: 429,
        type: ProblemType.rateLimited,
        title: 'Too many requests',
        detail: error.message,
      };
    case 'INVALID_PAGINATION':
      return {
        status: 400,
        type: ProblemType.invalidRequest,
        title: 'Invalid request',
        detail: error.message,
      };
    case 'NO_QUEUE_CONFIGURED':
      return {
        status: 403,
        type: ProblemType.noQueueConfigured,
        title: 'No queue configured',
        detail: error.message,
      };
    case 'STORE_UNAVAILABLE':
      return {
        status: 503,
        type: ProblemType.storeUnavailable,
        title: 'Service unavailable',
        detail: error.message,
      };
    case 'UPSTREAM_FAILED':
      return { status: 502, type: ProblemType.upstreamFailed, title: 'Bad gateway', detail: error.message };
    case 'CERTIFICATE_REQUEST_REFUSED':
      return {
        status: 400,
        type: ProblemType.badCertificateRequest,
        title: 'Bad certificate request',
        detail: error.message,
      };
    case 'ALREADY_RENEWED':
      return {
        status: 409,
        type: ProblemType.alreadyRenewed,
        title: 'Already renewed',
        detail: error.message,
      };
    case 'RENEW_TOO_EARLY':
      return {
        status: 409,
        type: ProblemType.renewTooEarly,
        title: 'Too early to renew',
        detail: error.message,
      };
    case 'RENEWAL_NOT_CONFIGURED':
      return {
        status: 501,
        type: ProblemType.renewalNotConfigured,
        title: 'Renewal not configured',
        detail: error.message,
      };
    case 'INVALID_SUBJECT_ACCESS_REQUEST':
      return {
        status: 400,
        type: ProblemType.invalidRequest,
        title: 'Invalid request',
        detail: error.message,
      };
    case 'TRAIL_INCOMPLETE':
      return {
        status: 503,
        type: ProblemType.trailUnavailable,
        title: 'Service unavailable',
        detail: error.message,
      };
    case 'UPSTREAM_TIMEOUT':
      return {
        status: 504,
        type: ProblemType.upstreamTimeout,
        title: 'Gateway timeout',
        detail: error.message,
      };
  }
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
          : {
              status: 400,
              type: ProblemType.badCertificateRequest,
              title: 'Bad certificate request',
              detail: error.message,
            },
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
            client: c.get('certificate')?.commonName ?? null,
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
            client: c.get('certificate')?.commonName ?? null,
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
