import { CASE_READS } from '../case-operations.js';

/**
 * Permissions are the operation ids, the case operations' first (their table,
 * case-operations.ts). A client holds a base set; a verified on-behalf-of user's grants widen
 * it (set union). Everything not granted is denied.
 */
export const PERMISSIONS = [
  ...CASE_READS,
  'issueQueueToken',
  'renewCertificate',
  'getSubjectAccessRequest',
  'getSubjectAccessRequestTemplate',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/**
 * What `npm start`'s development client and the bench's client are granted
 * (scripts/start.mjs, bench/lib/fixtures.mjs read it from dist/): every case operation and
 * queue tokens. Not renewCertificate nor the subject access operations: those need settings
 * of their own that npm start does not make.
 */
export const DEVELOPMENT_CLIENT_PERMISSIONS: readonly Permission[] = [...CASE_READS, 'issueQueueToken'];

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
