/**
 * Domain errors. Each has a stable `code` that adapters map to their own vocabulary
 * (HTTP status and problem type, CLI exit status). Messages never carry secrets and are
 * safe to show a client.
 */

export type DomainErrorCode = 'INVALID_CRN' | 'CASE_NOT_FOUND' | 'COMMUNITY_MANAGER_NOT_FOUND';

export abstract class DomainError extends Error {
  abstract readonly code: DomainErrorCode;
}

export class InvalidCrnError extends DomainError {
  readonly code = 'INVALID_CRN';
  constructor(readonly reason: string) {
    super(`crn is not valid: ${reason}`);
    this.name = 'InvalidCrnError';
  }
}

export class CaseNotFoundError extends DomainError {
  readonly code = 'CASE_NOT_FOUND';
  constructor(readonly crn: string) {
    super(`no case is held for crn ${crn}`);
    this.name = 'CaseNotFoundError';
  }
}

export class CommunityManagerNotFoundError extends DomainError {
  readonly code = 'COMMUNITY_MANAGER_NOT_FOUND';
  constructor(readonly crn: string) {
    super(`case ${crn} has no active community manager`);
    this.name = 'CommunityManagerNotFoundError';
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
