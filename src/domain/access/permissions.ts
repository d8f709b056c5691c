/**
 * Permissions are the operation ids. A client holds a base set; a verified on-behalf-of
 * user's grants widen it (set union). Everything not granted is denied.
 */
/** The case reads (`GET /case/{crn}…`): what a client reading cases is granted, and what the tests grant. */
export const CASE_READS = ['getCase', 'getHomeOfficeInterest', 'getCommunityManagerByCrn'] as const;

export const PERMISSIONS = [
  ...CASE_READS,
  'getRiskScores',
  'issueQueueToken',
  'renewCertificate',
  'getSubjectAccessRequest',
  'getSubjectAccessRequestTemplate',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** Parses `P[,P...]`; throws naming the first unknown permission. */
export function parsePermissionList(raw: string): Permission[] {
  const parts = raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length === 0) throw new Error(`no permissions given; expected some of ${PERMISSIONS.join(', ')}`);
  for (const part of parts) {
    if (!isPermission(part))
      throw new Error(
        `unknown permission ${JSON.stringify(part)}; expected some of ${PERMISSIONS.join(', ')}`,
      );
  }
  return [...new Set(parts as Permission[])];
}
