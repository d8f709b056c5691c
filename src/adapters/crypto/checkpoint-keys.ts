import { createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { type AuditCheckpoint, checkpointSignedText } from '../../domain/audit/checkpoint.js';
import type { CheckpointKeyring, CheckpointSigner, SignatureCheck } from '../../ports/checkpoint-keys.js';
import { auditPrivateKey, CheckpointKeyError, requireEd25519 } from './ed25519-keys.js';
import { noteSigner } from './note-keys.js';

export { CheckpointKeyError };

/**
 * The audit checkpoints' Ed25519 keys, with node:crypto (on Node, Bun and Deno alike). A
 * key's id is the RFC 7638 JWK thumbprint of its public key (SHA-256, by jose): it names the
 * key without revealing anything, and anyone holding the public key can compute it.
 */

const keyIdOf = async (publicKey: KeyObject): Promise<string> =>
  calculateJwkThumbprint(publicKey.export({ format: 'jwk' }) as JWK, 'sha256');

/**
 * The signer of `AUDIT_SIGNING_KEY`: an Ed25519 private key in PEM (PKCS #8), signing the
 * checkpoints and, named by the log's `origin`, their notes.
 */
export async function checkpointSigner(pem: string, origin: string): Promise<CheckpointSigner> {
  const key = auditPrivateKey(pem);
  return {
    keyId: await keyIdOf(createPublicKey(key)),
    sign: (text) => sign(null, Buffer.from(text, 'utf8'), key).toString('base64url'),
    note: noteSigner(pem, origin),
  };
}

/** The keyring of `audit verify --public-key`: Ed25519 public keys in PEM (SPKI), each file named in errors. */
export async function checkpointKeyring(
  files: readonly { readonly path: string; readonly pem: string }[],
): Promise<CheckpointKeyring> {
  const keys = new Map<string, KeyObject>();
  for (const { path, pem } of files) {
    let key: KeyObject;
    try {
      key = createPublicKey(pem);
    } catch {
      throw new CheckpointKeyError(`${path} holds no public key in PEM`);
    }
    // A private key given by mistake yields its public half; say so rather than use it quietly.
    if (key.type !== 'public' || /PRIVATE KEY/.test(pem)) {
      throw new CheckpointKeyError(
        `${path} holds a private key; give the public key (audit-signing-key.pub.pem)`,
      );
    }
    requireEd25519(key, path);
    keys.set(await keyIdOf(key), key);
  }
  return {
    keyIds: [...keys.keys()],
    check(checkpoint: AuditCheckpoint): SignatureCheck {
      const key = keys.get(checkpoint.keyId);
      if (key === undefined) return 'unknown-key';
      const { signature, ...signed } = checkpoint;
      const bytes = Buffer.from(signature, 'base64url');
      return bytes.length === 64 &&
        verify(null, Buffer.from(checkpointSignedText(signed), 'utf8'), key, bytes)
        ? 'valid'
        : 'invalid';
    },
  };
}

/** A new signing key pair for `audit keygen`: the private key (PKCS #8) and the public key (SPKI), in PEM, and its id. */
export async function generateCheckpointKeys(): Promise<{
  privatePem: string;
  publicPem: string;
  keyId: string;
}> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId: await keyIdOf(publicKey),
  };
}
