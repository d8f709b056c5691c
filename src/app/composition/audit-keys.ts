/**
 * The part of the operator commands' composition root that the audit commands use: the
 * checkpoints' keys and SHA-256, nothing else, so `audit …` loads no HTTP app, X.509 or AWS
 * code (`audit verify --since` is meant to cost the records since a checkpoint, not a start-up
 * of the whole service). `operator.ts` re-exports it. The application's audit work
 * (src/app/audit) is handed these by the commands: it imports nothing from here.
 */
import {
  notePublicKey as ed25519NotePublicKey,
  noteSigner as ed25519NoteSigner,
  verifyNoteSignature,
} from '../../adapters/crypto/note-keys.js';
import { sha256Bytes, sha256Hex } from '../../adapters/shared/sha256.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { NoteVerifier, NoteVerifierKey } from '../../tlog/note.js';

/** `audit keygen`, `audit verify --public-key`: the checkpoints' Ed25519 keys (node:crypto, ids by jose). */
export {
  CheckpointKeyError,
  checkpointKeyring,
  checkpointSigner,
  generateCheckpointKeys,
} from '../../adapters/crypto/checkpoint-keys.js';
/** The files commands read (entries, proofs, keys, CSRs, --bind-cert, case files): regular files, opened without blocking (decisions §20). */
export { readRegularFileSync } from '../../adapters/shared/named-files.js';
/** `audit vkey`, `audit archive`, …: `AUDIT_SIGNING_KEY` refused when others can read it, as `serve` refuses it. */
export { checkSecretFile, readSecretFile } from '../../adapters/shared/secret-files.js';
/** SHA-256 as the audit stores hash: hex over text, bytes over bytes. */
/** `audit verify-proof`: an Ed25519 signature of a note checked against a verifier key (node:crypto). */
export { sha256Bytes, sha256Hex, verifyNoteSignature };

/** SHA-256 as the application's audit work is handed it (node:crypto). */
export const auditHashes: AuditHashes = { sha256: sha256Bytes, sha256Hex };

/** A note key that checks its own signatures, Ed25519 (node:crypto): how checkpoints are opened. */
export const noteVerifier = <K extends NoteVerifierKey>(key: K): K & NoteVerifier => ({
  ...key,
  verify: (message, signature) => verifyNoteSignature(key, message, signature),
});

/** `audit vkey`, `audit archive`, `audit prove`: `AUDIT_SIGNING_KEY` as a C2SP note key named by the log's origin, that signs and verifies. */
export const noteSigner = (pem: string, origin: string) => noteVerifier(ed25519NoteSigner(pem, origin));

/** `audit vkey`, `--public-key`: a public key as a C2SP note key named by the log's origin, that verifies. */
export const notePublicKey = (pem: string, origin: string) => noteVerifier(ed25519NotePublicKey(pem, origin));
