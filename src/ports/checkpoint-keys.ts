import type { AuditCheckpoint } from '../domain/audit/checkpoint.js';

/** A C2SP signed-note key that signs: its name (the log's origin), its 32-bit id, and Ed25519 over the note's bytes. */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  /** The 32-byte Ed25519 public key: what a witness policy's `log` line must name. */
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

/** Signs the audit chain's checkpoints with the service's private key (decisions §9, §14). */
export interface CheckpointSigner {
  /** The key's id, written into each checkpoint: the RFC 7638 thumbprint of its public key. */
  readonly keyId: string;
  /** The signature over `text`, base64url. */
  sign(text: string): string;
  /** The same key as a signed-note key named by the log's origin: it signs the tree's checkpoint notes. */
  readonly note: NoteSigner;
}

/** How one checkpoint's signature stood against the public keys given. */
export type SignatureCheck = 'valid' | 'invalid' | 'unknown-key';

/** The public keys `audit verify` checks checkpoints with, by key id (old keys too, after a rotation). */
export interface CheckpointKeyring {
  readonly keyIds: readonly string[];
  check(checkpoint: AuditCheckpoint): SignatureCheck;
}
