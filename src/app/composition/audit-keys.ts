/**
 * The part of the operator commands' composition root that the audit commands use: the
 * checkpoints' keys and SHA-256, nothing else, so `audit …` loads no HTTP app, X.509 or AWS
 * code (`audit verify --since` is meant to cost the records since a checkpoint, not a start-up
 * of the whole service). `operator.ts` re-exports it.
 */

/** `audit keygen`, `audit verify --public-key`: the checkpoints' Ed25519 keys (node:crypto, ids by jose). */
export {
  CheckpointKeyError,
  checkpointKeyring,
  generateCheckpointKeys,
} from '../../adapters/crypto/checkpoint-keys.js';
/** `audit vkey`, `audit verify-proof`, `audit prove`: the log's key as a C2SP note key (node:crypto). */
export { notePublicKey, noteSigner, verifyNoteSignature } from '../../adapters/crypto/note-keys.js';
/** `audit vkey`, `audit archive`, …: `AUDIT_SIGNING_KEY` refused when others can read it, as `serve` refuses it. */
export { checkSecretFile } from '../../adapters/shared/secret-files.js';
/** SHA-256 as the audit stores hash: hex over text, bytes over bytes. */
export { sha256Bytes, sha256Hex } from '../../adapters/shared/sha256.js';
