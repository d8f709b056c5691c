import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  CheckpointKeyError,
  checkpointKeyring,
  checkpointSigner,
  generateCheckpointKeys,
} from '../../../src/adapters/crypto/checkpoint-keys.js';
import { type AuditCheckpoint, signCheckpoint } from '../../../src/domain/audit/checkpoint.js';

async function signed(privatePem: string, seq = 4): Promise<AuditCheckpoint> {
  const signer = await checkpointSigner(privatePem, 'test.invalid/log');
  return signCheckpoint({ seq, hash: 'a'.repeat(64) }, new Date('2026-11-23T10:00:00.000Z'), signer);
}

describe('checkpoint keys (Ed25519)', () => {
  it('signs checkpoints its public key verifies; the key id is the RFC 7638 thumbprint', async () => {
    const keys = await generateCheckpointKeys();
    const { publicKey } = { publicKey: (await import('node:crypto')).createPublicKey(keys.publicPem) };
    expect(keys.keyId).toBe(
      await calculateJwkThumbprint(publicKey.export({ format: 'jwk' }) as JWK, 'sha256'),
    );
    const checkpoint = await signed(keys.privatePem);
    expect(checkpoint.keyId).toBe(keys.keyId);
    expect(Buffer.from(checkpoint.signature, 'base64url')).toHaveLength(64);
    const keyring = await checkpointKeyring([{ path: 'pub.pem', pem: keys.publicPem }]);
    expect(keyring.keyIds).toEqual([keys.keyId]);
    expect(keyring.check(checkpoint)).toBe('valid');
  });

  it('refuses a checkpoint changed after signing, and one signed by a key not given', async () => {
    const keys = await generateCheckpointKeys();
    const other = await generateCheckpointKeys();
    const keyring = await checkpointKeyring([{ path: 'pub.pem', pem: keys.publicPem }]);
    const checkpoint = await signed(keys.privatePem);
    for (const changed of [{ seq: 5 }, { head: 'b'.repeat(64) }, { time: '2026-11-23T10:00:01.000Z' }]) {
      expect(keyring.check({ ...checkpoint, ...changed })).toBe('invalid');
    }
    expect(keyring.check({ ...checkpoint, signature: 'AAAA' })).toBe('invalid');
    const forged = await signed(other.privatePem);
    expect(keyring.check(forged)).toBe('unknown-key');
    // Another key's signature under this key's id.
    expect(keyring.check({ ...forged, keyId: keys.keyId })).toBe('invalid');
  });

  it('checks old checkpoints with the old public key after a rotation', async () => {
    const old = await generateCheckpointKeys();
    const next = await generateCheckpointKeys();
    const keyring = await checkpointKeyring([
      { path: 'old.pem', pem: old.publicPem },
      { path: 'new.pem', pem: next.publicPem },
    ]);
    expect(keyring.check(await signed(old.privatePem, 3))).toBe('valid');
    expect(keyring.check(await signed(next.privatePem, 9))).toBe('valid');
  });

  it('refuses keys that are not Ed25519, a private key given as public, and text that is no key', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await expect(
      checkpointSigner(
        rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        'test.invalid/log',
      ),
    ).rejects.toThrow(/rsa key; an Ed25519 key is needed/);
    await expect(checkpointSigner('not a key', 'test.invalid/log')).rejects.toThrow(CheckpointKeyError);
    const keys = await generateCheckpointKeys();
    await expect(checkpointKeyring([{ path: 'k.pem', pem: keys.privatePem }])).rejects.toThrow(
      /k.pem holds a private key/,
    );
    await expect(checkpointKeyring([{ path: 'x.pem', pem: 'nothing' }])).rejects.toThrow(
      /x.pem holds no public key/,
    );
    // The error names what was wrong, never the key.
    await checkpointSigner(
      '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----',
      'test.invalid/log',
    ).catch((error: Error) => expect(error.message).not.toContain('AAAA'));
  });
});
