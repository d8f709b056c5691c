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

/**
 * The Ed25519 key `pem` holds, as `read` takes it (`createPrivateKey`, or `createPublicKey`,
 * which also gives a private key's public half); none is a {@link CheckpointKeyError} saying
 * `none`, another kind of key one naming its kind.
 */
export function ed25519KeyOf(pem: string, read: (pem: string) => KeyObject, none: string): KeyObject {
  let key: KeyObject;
  try {
    key = read(pem);
  } catch {
    throw new CheckpointKeyError(none);
  }
  requireEd25519(key, 'it');
  return key;
}

/** `AUDIT_SIGNING_KEY`'s key: an Ed25519 private key in PEM (PKCS #8), or an error naming what it holds. */
export const auditPrivateKey = (pem: string): KeyObject =>
  ed25519KeyOf(pem, createPrivateKey, 'it holds no private key in PEM');
