import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { COSIGNATURE_V1, cosignatureVerifier, cosignerKeyLine } from '../../tlog/cosignature.js';
import {
  fromBase64,
  hex8,
  isNoteName,
  type NoteVerifier,
  type NoteVerifierKey,
  noteKeyId,
  toBase64,
} from '../../tlog/note.js';
import { sha256Bytes } from '../shared/sha256.js';
import { ed25519Verify } from './note-keys.js';

/**
 * Ed25519 cosigner keys (C2SP tlog-cosignature/v1, key type 0x04; decisions §19), on
 * node:crypto: the verifier a reader checks a witness's cosignatures with, and the witness's own
 * private key, kept in a file the way Go's golang.org/x/mod/sumdb/note writes a signer key:
 * `PRIVATE+KEY+NAME+KEY_ID_HEX+BASE64(0x04 ‖ 32-byte Ed25519 seed)` on one line.
 */

/** A cosigner key file or text that is not one; the message names what is wrong, never the key. */
export class CosignerKeyError extends Error {
  override readonly name = 'CosignerKeyError';
}

/** A cosigner's private key read: what it signs with and the verifier key line others trust it by. */
export interface CosignerSigner {
  readonly name: string;
  readonly keyId: number;
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** The verifier key line: `NAME+KEY_ID_HEX+BASE64(0x04 ‖ PUBLIC_KEY)`. */
  readonly vkey: string;
  /** The Ed25519 signature (64 bytes) of `message`; cosignature.ts's cosignatureLine builds the message. */
  sign(message: Uint8Array): Uint8Array;
}

/** The NoteVerifier of a cosigner key (from a policy's witness line): checks its cosignature/v1 signatures. */
export function cosignerVerifier(key: NoteVerifierKey): NoteVerifier {
  return cosignatureVerifier(key, ed25519Verify);
}

const SKEY_PREFIX = 'PRIVATE+KEY+';

/** PKCS #8 DER of an Ed25519 private key, but its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

const rawPublicKey = (key: KeyObject): Uint8Array =>
  new Uint8Array(Buffer.from((key.export({ format: 'jwk' }) as { x: string }).x, 'base64url'));

const seedOf = (key: KeyObject): Uint8Array =>
  new Uint8Array(Buffer.from((key.export({ format: 'jwk' }) as { d: string }).d, 'base64url'));

/**
 * A new cosigner key named `name` (a key name: no spaces, no `+`; by convention a schema-less
 * URL such as `witness.example.org/w1`): its private key line (keep it secret) and its
 * verifier key line (hand it to the logs and the policies that trust it).
 */
export function newCosignerKey(name: string): { readonly skey: string; readonly vkey: string } {
  if (!isNoteName(name))
    throw new CosignerKeyError(`${JSON.stringify(name)} cannot name a key: no spaces, no +`);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = rawPublicKey(publicKey);
  const keyId = hex8(noteKeyId(sha256Bytes, name, raw, COSIGNATURE_V1));
  const seed = seedOf(privateKey);
  const skey = `${SKEY_PREFIX}${name}+${keyId}+${toBase64(Uint8Array.of(COSIGNATURE_V1, ...seed))}`;
  return { skey, vkey: cosignerKeyLine(sha256Bytes, name, raw) };
}

/**
 * The cosigner of a private key line (`PRIVATE+KEY+NAME+KEYID+BASE64(0x04 ‖ SEED)`, surrounding
 * white space ignored), or a CosignerKeyError naming what is wrong with it (never its key).
 */
export function cosignerFromSkey(text: string): CosignerSigner {
  const line = text.trim();
  if (!line.startsWith(SKEY_PREFIX))
    throw new CosignerKeyError('it is not a private key line: PRIVATE+KEY+NAME+KEYID+KEY');
  const match = /^([^+]*)\+([^+]*)\+(.*)$/.exec(line.slice(SKEY_PREFIX.length));
  if (!match) throw new CosignerKeyError('it is not a private key line: PRIVATE+KEY+NAME+KEYID+KEY');
  const [, name = '', id = '', encoded = ''] = match;
  if (!isNoteName(name)) throw new CosignerKeyError('its name is not a key name');
  if (!/^[0-9a-f]{8}$/.test(id)) throw new CosignerKeyError('its key id is not 8 lower-case hex digits');
  const bytes = fromBase64(encoded);
  if (bytes === undefined || bytes.length !== 33 || bytes[0] !== COSIGNATURE_V1) {
    throw new CosignerKeyError('its key is not a cosigner key (0x04 and a 32-byte Ed25519 seed, base64)');
  }
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, bytes.subarray(1)]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = rawPublicKey(createPublicKey(privateKey));
  const keyId = Number.parseInt(id, 16);
  if (noteKeyId(sha256Bytes, name, publicKey, COSIGNATURE_V1) !== keyId)
    throw new CosignerKeyError('its key id does not match its name and key');
  return {
    name,
    keyId,
    publicKey,
    vkey: cosignerKeyLine(sha256Bytes, name, publicKey),
    sign: (message) => new Uint8Array(sign(null, message, privateKey)),
  };
}

/** Writes a new private key line to `path`, readable by its owner only; an existing file is never overwritten. */
export function writeCosignerKeyFile(path: string, skey: string): void {
  writeFileSync(path, `${skey}\n`, { mode: 0o600, flag: 'wx' });
}

/** The cosigner of the private key file at `path`; a file that cannot be read or is not one is a CosignerKeyError naming the path. */
export function readCosignerKeyFile(path: string): CosignerSigner {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error';
    throw new CosignerKeyError(`the cosigner key file ${path} cannot be read (${code})`);
  }
  try {
    return cosignerFromSkey(text);
  } catch (error) {
    if (error instanceof CosignerKeyError)
      throw new CosignerKeyError(`the cosigner key file ${path}: ${error.message}`);
    throw error;
  }
}
