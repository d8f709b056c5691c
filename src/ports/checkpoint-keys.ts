import type { AuditCheckpoint } from '../domain/audit/checkpoint.js';

/** Signs the audit chain's checkpoints with the service's private key (decisions §9). */
export interface CheckpointSigner {
  /** The key's id, written into each checkpoint: the RFC 7638 thumbprint of its public key. */
  readonly keyId: string;
  /** The signature over `text`, base64url. */
  sign(text: string): string;
}

/** How one checkpoint's signature stood against the public keys given. */
export type SignatureCheck = 'valid' | 'invalid' | 'unknown-key';

/** The public keys `audit verify` checks checkpoints with, by key id (old keys too, after a rotation). */
export interface CheckpointKeyring {
  readonly keyIds: readonly string[];
  check(checkpoint: AuditCheckpoint): SignatureCheck;
}
