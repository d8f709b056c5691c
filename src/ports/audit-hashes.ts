import type { Sha256 } from '../tlog/merkle.js';

/**
 * SHA-256 as the audit trail hashes (decisions §9, §14), handed to the application's audit work
 * (src/app/audit) by whoever calls it: the composition root's (node:crypto) for the commands.
 * The signatures of checkpoint notes come in the same way, as keys that check their own
 * (src/tlog/note.ts, `NoteVerifier`).
 */
export interface AuditHashes {
  /** Over the concatenation of byte strings: the tree's leaves and nodes, the hash tiles. */
  readonly sha256: Sha256;
  /** Of a text's UTF-8 bytes, in lower-case hex: the chain's record hashes. */
  readonly sha256Hex: (text: string) => string;
}
