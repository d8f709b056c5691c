/**
 * C2SP tlog-cosignature, the Ed25519 `cosignature/v1` (decisions §19): a witness's statement
 * that, as of a time, the checkpoint is the largest consistent one it has seen of the log.
 *
 * - A cosigner's key is an Ed25519 key of type 0x04: its id is SHA-256(NAME ‖ 0x0A ‖ 0x04 ‖
 *   PUBLIC_KEY)[:4], its verifier key line `NAME+KEY_ID_HEX+BASE64(0x04 ‖ PUBLIC_KEY)`.
 * - A cosignature is a note signature line, `— NAME BASE64(KEY_ID ‖ TIMESTAMP ‖ SIGNATURE)`,
 *   TIMESTAMP eight bytes big-endian (POSIX seconds), SIGNATURE Ed25519 over
 *   `cosignature/v1\ntime TIMESTAMP\n` followed by the checkpoint's note text.
 *
 * Ed25519 itself is handed in (an adapter's); the rest is here.
 */
import type { Sha256 } from './merkle.js';
import {
  concat,
  hasControl,
  NoteError,
  type NoteVerifier,
  type NoteVerifierKey,
  noteTextOf,
  parseVerifierKey,
  signatureLineParts,
  signatureLinesOf,
  toBase64,
  verifierKeyLine,
} from './note.js';

/** The signature lines of a signed note (note.ts), here too beside the cosignatures they carry. */
export { signatureLinesOf };

/** The key type byte of an Ed25519 cosigner key (tlog-cosignature/v1). */
export const COSIGNATURE_V1 = 0x04;

const encoder = new TextEncoder();

/** Bytes of a cosignature/v1 signature after the key id: an 8-byte timestamp and a 64-byte Ed25519 signature. */
const TIMESTAMPED_SIGNATURE = 8 + 64;

/**
 * The verifier key line of a cosigner: `NAME+KEYID+BASE64(0x04 ‖ PUBLIC_KEY)`, the key id
 * SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4]. Throws a NoteError for a name or key that cannot be one.
 */
export function cosignerKeyLine(sha256: Sha256, name: string, publicKey: Uint8Array): string {
  return verifierKeyLine(sha256, name, publicKey, COSIGNATURE_V1);
}

/** A cosigner's verifier key line read from outside (type 0x04, its key id checked), or what is wrong with it. */
export function parseCosignerKey(
  sha256: Sha256,
  line: string,
): NoteVerifierKey | { readonly invalid: string } {
  return parseVerifierKey(sha256, line, COSIGNATURE_V1);
}

/** Whether `timestamp` can be a cosignature's: whole seconds, not negative, exactly representable. */
const isTimestamp = (timestamp: number): boolean => Number.isSafeInteger(timestamp) && timestamp >= 0;

/** The header and time lines the cosigned message begins with. */
const messageHead = (timestamp: number): Uint8Array => encoder.encode(`cosignature/v1\ntime ${timestamp}\n`);

/**
 * The message a cosignature/v1 signs: `cosignature/v1\ntime T\n` followed by the checkpoint's
 * note text (its body lines, final newline included, no signature lines).
 */
export function cosignedMessage(noteText: string, timestamp: number): Uint8Array {
  if (!isTimestamp(timestamp)) throw new NoteError(`${timestamp} is not a cosignature timestamp`);
  return concat(messageHead(timestamp), encoder.encode(noteText));
}

/**
 * One cosignature line by `key` on the checkpoint whose note text is `noteText`, at `timestamp`
 * (POSIX seconds): `— NAME BASE64(KEYID(4) ‖ TIMESTAMP(8, big-endian) ‖ SIG(64))\n`.
 */
export function cosignatureLine(
  key: { readonly name: string; readonly keyId: number; sign(message: Uint8Array): Uint8Array },
  noteText: string,
  timestamp: number,
): string {
  if (!noteText.endsWith('\n')) throw new NoteError('a note text ends with a newline');
  if (hasControl(noteText)) throw new NoteError('a note text holds no control characters');
  const signature = key.sign(cosignedMessage(noteText, timestamp));
  if (signature.length !== 64) throw new NoteError('an Ed25519 signature is 64 bytes');
  const head = new Uint8Array(12);
  const view = new DataView(head.buffer);
  view.setUint32(0, key.keyId);
  view.setBigUint64(4, BigInt(timestamp));
  return `— ${key.name} ${toBase64(concat(head, signature))}\n`;
}

/** The timestamp at the head of a timestamped signature, or undefined beyond what a number holds exactly. */
function timestampOf(signature: Uint8Array): number | undefined {
  const time = new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0);
  return time <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(time) : undefined;
}

/**
 * A NoteVerifier (note.ts) for a cosigner: its verify(message, sig) takes sig = timestamp ‖
 * Ed25519 signature and checks the signature over the cosigned message of `message` at that
 * time. Open a note with it (openNote with verifyWith) as with a log's key.
 */
export function cosignatureVerifier(
  key: NoteVerifierKey,
  ed25519Verify: (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean,
): NoteVerifier {
  return {
    name: key.name,
    keyId: key.keyId,
    publicKey: key.publicKey,
    verify(message, signature) {
      if (signature.length !== TIMESTAMPED_SIGNATURE) return false;
      const timestamp = timestampOf(signature);
      if (timestamp === undefined) return false;
      return ed25519Verify(key.publicKey, concat(messageHead(timestamp), message), signature.slice(8));
    },
  };
}

/**
 * The note with `lines` (each `— NAME BASE64`, no newline) added after its own signature lines,
 * each line once: one the note already carries, or repeated in `lines`, is not added again.
 */
export function withSignatureLines(note: string, lines: readonly string[]): string {
  const text = noteTextOf(note);
  if (text === undefined || !note.endsWith('\n')) throw new NoteError('it is not a signed note');
  const held = new Set(signatureLinesOf(note));
  let out = note;
  for (const line of lines) {
    if (signatureLineParts(line) === undefined)
      throw new NoteError(`a signature line is not "— NAME BASE64": ${JSON.stringify(line.slice(0, 80))}`);
    if (held.has(line)) continue;
    held.add(line);
    out += `${line}\n`;
  }
  return out;
}

/** The timestamp (POSIX seconds) a cosignature/v1 line carries, or undefined when it is not one. */
export function cosignatureTime(line: string): number | undefined {
  const parts = signatureLineParts(line);
  if (parts === undefined || parts.signature.length !== TIMESTAMPED_SIGNATURE) return undefined;
  return timestampOf(parts.signature);
}
