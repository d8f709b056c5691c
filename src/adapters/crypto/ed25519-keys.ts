import { createPrivateKey, type KeyObject } from 'node:crypto';

/**
 * Reading the audit log's Ed25519 keys (node:crypto), the one way for both forms it signs in:
 * the checkpoints (`checkpoint-keys.ts`) and the C2SP notes (`note-keys.ts`).
 */

/** A key file that is not what it should be; the message names what was found, never the key. */
export class CheckpointKeyError extends Error {
  override readonly name = 'CheckpointKeyError';
}

export function requireEd25519(key: KeyObject, what: string): void {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new CheckpointKeyError(
      `${what} is a ${key.asymmetricKeyType ?? 'symmetric'} key; an Ed25519 key is needed`,
    );
  }
}

/** `AUDIT_SIGNING_KEY`'s key: an Ed25519 private key in PEM (PKCS #8), or an error naming what it holds. */
export function auditPrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new CheckpointKeyError('it holds no private key in PEM');
  }
  requireEd25519(key, 'it');
  return key;
}
