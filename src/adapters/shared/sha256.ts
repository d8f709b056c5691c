import * as crypto from 'node:crypto';

/**
 * Hex SHA-256 of a text, for the adapters that hash on the request path (API key checks,
 * the audit chains). `crypto.hash` (Node ≥ 20.12) hashes in one call, without the Hash
 * object `createHash` builds for each use; a runtime without it uses `createHash`.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/** SHA-256 over the concatenation of `parts`, as bytes: the Merkle tree's and the signed notes' hash. */
export function sha256Bytes(...parts: readonly Uint8Array[]): Uint8Array {
  const hash = crypto.createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}
