/**
 * The problem types this service answers with (RFC 9457 `type`), one URN per kind of problem:
 * the vocabulary of its wire format, which an upstream that is another instance of this
 * service speaks too. Plain data, so the upstream store can read it without the HTTP
 * framework.
 */
export const PROBLEM_PREFIX = 'urn:case-read:problem:';

export const ProblemType = {
  invalidCrn: 'urn:case-read:problem:invalid-crn',
  invalidRequest: 'urn:case-read:problem:invalid-request',
  caseNotFound: 'urn:case-read:problem:case-not-found',
  communityManagerNotFound: 'urn:case-read:problem:community-manager-not-found',
  notFound: 'urn:case-read:problem:not-found',
  methodNotAllowed: 'urn:case-read:problem:method-not-allowed',
  internal: 'urn:case-read:problem:internal-error',
  accessDenied: 'urn:case-read:problem:access-denied',
  clientNotAllowed: 'urn:case-read:problem:client-not-allowed',
  unauthenticated: 'urn:case-read:problem:unauthenticated',
  onBehalfOfNotAllowed: 'urn:case-read:problem:on-behalf-of-not-allowed',
  permissionDenied: 'urn:case-read:problem:permission-denied',
  limitedAccess: 'urn:case-read:problem:limited-access',
  noQueueConfigured: 'urn:case-read:problem:no-queue-configured',
  upstreamFailed: 'urn:case-read:problem:upstream-failed',
  upstreamTimeout: 'urn:case-read:problem:upstream-timeout',
  rateLimited: 'urn:case-read:problem:rate-limited',
  auditUnavailable: 'urn:case-read:problem:audit-unavailable',
  storeUnavailable: 'urn:case-read:problem:store-unavailable',
  overloaded: 'urn:case-read:problem:overloaded',
  badCertificateRequest: 'urn:case-read:problem:bad-certificate-request',
  requestTooLarge: 'urn:case-read:problem:request-too-large',
  alreadyRenewed: 'urn:case-read:problem:already-renewed',
  renewTooEarly: 'urn:case-read:problem:renew-too-early',
  renewalNotConfigured: 'urn:case-read:problem:renewal-not-configured',
  trailUnavailable: 'urn:case-read:problem:trail-unavailable',
} as const;
export type ProblemTypeUri = (typeof ProblemType)[keyof typeof ProblemType];
