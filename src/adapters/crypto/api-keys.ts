import { randomBytes, timingSafeEqual } from 'node:crypto';
import { formatApiKey } from '../../domain/access/api-key.js';
import type { SecretHasher } from '../../ports/secret-hasher.js';
import { sha256Hex } from '../shared/sha256.js';

/**
 * API key secrets carry 256 bits from the system CSPRNG, so a fast hash is enough to store
 * them: nobody can guess a preimage of SHA-256 over 256 random bits. The stored value is the
 * hex SHA-256 of the secret; comparison is constant-time.
 */
export const sha256Hasher: SecretHasher & { hash(secret: string): string } = {
  hash: (secret) => sha256Hex(secret),
  matches(secret, secretHash) {
    const presented = Buffer.from(sha256Hex(secret), 'utf8');
    const stored = Buffer.from(secretHash, 'utf8');
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  },
};

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new key: the full value (shown once) and what is stored. */
export function generateApiKey(): { id: string; key: string; secretHash: string } {
  const idBytes = randomBytes(16);
  const id = [...idBytes].map((b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
  const secret = randomBytes(32).toString('base64url');
  return { id, key: formatApiKey(id, secret), secretHash: sha256Hasher.hash(secret) };
}
