import { createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import type { NoteSigner as NoteSigning } from '../../ports/checkpoint-keys.js';
import { type NoteVerifierKey, noteKeyId, verifierKeyLine } from '../../tlog/note.js';
import { sha256Bytes } from '../shared/sha256.js';
import { auditPrivateKey, ed25519KeyOf } from './ed25519-keys.js';

/**
 * The audit log's Ed25519 key in the C2SP signed-note form (decisions §14): the same
 * `AUDIT_SIGNING_KEY` that signs checkpoints, named by the log's origin. node:crypto, on Node,
 * Bun and Deno alike.
 */

/** A note key: what signs (when private) and what others verify with. */
export interface NoteKey {
  readonly name: string;
  readonly keyId: number;
  readonly publicKey: Uint8Array;
  /** The verifier key line: `NAME+KEY_ID_HEX+BASE64(0x01 ‖ PUBLIC_KEY)`. */
  readonly vkey: string;
}

export interface NoteSigner extends NoteKey, NoteSigning {}

/** The 32 bytes of an Ed25519 public key. */
const rawPublicKey = (key: KeyObject): Uint8Array =>
  new Uint8Array(Buffer.from((key.export({ format: 'jwk' }) as { x: string }).x, 'base64url'));

function noteKey(name: string, publicKey: KeyObject): NoteKey {
  const raw = rawPublicKey(publicKey);
  return {
    name,
    keyId: noteKeyId(sha256Bytes, name, raw),
    publicKey: raw,
    vkey: verifierKeyLine(sha256Bytes, name, raw),
  };
}

/** The signer of `AUDIT_SIGNING_KEY` (an Ed25519 private key in PEM) for the log `origin`. */
export function noteSigner(pem: string, origin: string): NoteSigner {
  const key = auditPrivateKey(pem);
  return {
    ...noteKey(origin, createPublicKey(key)),
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}

/** The note key of an Ed25519 public key in PEM (or the public half of a private one) for `origin`. */
export function notePublicKey(pem: string, origin: string): NoteKey {
  return noteKey(origin, ed25519KeyOf(pem, createPublicKey, 'it holds no key in PEM'));
}

/** Checks an Ed25519 signature over `message` by a key from a verifier key line. */
export function verifyNoteSignature(
  key: NoteVerifierKey,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  return ed25519Verify(key.publicKey, message, signature);
}

/** Checks an Ed25519 signature over `message` by the 32-byte public key `publicKey`: the raw check notes and cosignatures share. */
export function ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') },
    format: 'jwk',
  });
  return verify(null, message, key, signature);
}
