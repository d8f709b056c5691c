import * as crypto from 'node:crypto';

/**
 * Hex SHA-256 of a text. `crypto.hash` (Node ≥ 20.12) hashes in one call, without the Hash
 * object `createHash` builds; runtimes without it use `createHash`.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
