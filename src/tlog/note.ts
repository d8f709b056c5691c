/**
 * C2SP signed notes and the checkpoints written in them (decisions §14): the formats that
 * Certificate Transparency's successors, the Go checksum database and Sigstore share, so an
 * auditor checks this trail's checkpoints and proofs with a verifier someone else wrote.
 *
 * - signed-note: a text ending in a newline, a blank line, then one line per signature,
 *   `— NAME BASE64(KEY_ID ‖ SIGNATURE)`. An Ed25519 key's id is the first four bytes of
 *   SHA-256(NAME ‖ 0x0A ‖ 0x01 ‖ PUBLIC_KEY); its verifier key is the line
 *   `NAME+KEY_ID_HEX+BASE64(0x01 ‖ PUBLIC_KEY)`.
 * - tlog-checkpoint: the note's text is `ORIGIN\nSIZE\nBASE64(ROOT)\n`, then optional extension
 *   lines; the signing key's name is the origin.
 *
 * Signing and checking a signature are given (Ed25519 is an adapter's); the rest is here.
 */
import type { Hash, Sha256 } from './merkle.js';

/** The signature algorithm byte of an Ed25519 key in a verifier key and a key id. */
const ED25519 = 0x01;

const encoder = new TextEncoder();

/** Bytes turned into a string at a time: a multiple of three, well below any runtime's limit on arguments. */
const BASE64_CHUNK = 3 * 4096;

/** Standard base64 (with padding) of `bytes`, as the notes write it; any length (a batch proof's hashes run to megabytes). */
export function toBase64(bytes: Uint8Array): string {
  if (bytes.length <= BASE64_CHUNK) return btoa(String.fromCharCode(...bytes));
  let text = '';
  for (let at = 0; at < bytes.length; at += BASE64_CHUNK) {
    text += btoa(String.fromCharCode(...bytes.subarray(at, at + BASE64_CHUNK)));
  }
  return text;
}

/** Whether `text` holds a control character a note may not: below space, but the newline (Go's note: r < 0x20 && r != '\\n'). */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && code !== 0x0a) return true;
  }
  return false;
}
/**
 * Whether `text` holds what a note read from bytes cannot carry faithfully: a lone surrogate
 * (no UTF-8 encodes one) or U+FFFD (what a decoder makes of bytes that are not UTF-8).
 */
const notUtf8Text = (text: string): boolean => text.includes('\uFFFD') || /\p{Cs}/u.test(text);
/** White space as Go's unicode.IsSpace has it: a signature line's name holds none. */
const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;
/** A signature line's name as Go's note.Open takes one: not empty, no white space, no '+', whole UTF-8. */
const isSignatureName = (name: string): boolean =>
  name.length > 0 && !GO_SPACE.test(name) && !name.includes('+') && !/\p{Cs}/u.test(name);
/** The most signatures a note may carry (Go's note.Open). */
const MAX_SIGNATURES = 100;

/** Standard base64 (with padding) as the notes write it, or undefined when it is not that. */
export function fromBase64(text: string): Uint8Array | undefined {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return undefined;
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** The byte arrays end to end. */
export const concat = (...parts: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

/**
 * Whether `name` may name a key (and a log's origin): not empty, no whitespace, no `+`, and no
 * control character, as the signed-note format requires.
 */
export const isNoteName = (name: string): boolean =>
  name.length > 0 && name.length <= 256 && !/[\s+\p{Cc}]|\p{Cs}/u.test(name);

/**
 * The key id of a public key under `name`: the first four bytes of SHA-256(name ‖ 0x0A ‖
 * ALGORITHM ‖ key); `algorithm` is 0x01 for a note's Ed25519 key, 0x04 for a cosigner's
 * (tlog-cosignature/v1).
 */
export function noteKeyId(sha256: Sha256, name: string, publicKey: Uint8Array, algorithm = ED25519): number {
  const digest = sha256(encoder.encode(name), Uint8Array.of(0x0a, algorithm), publicKey);
  return new DataView(digest.buffer, digest.byteOffset, 4).getUint32(0);
}

/** An Ed25519 public key as a note verifier names it. */
export interface NoteVerifierKey {
  readonly name: string;
  readonly keyId: number;
  /** The 32-byte Ed25519 public key. */
  readonly publicKey: Uint8Array;
}

/**
 * A key that checks its own signatures (Go's note.Verifier): what a reader opens notes with
 * when the signature scheme is handed in (Ed25519 is an adapter's) rather than known here.
 */
export interface NoteVerifier extends NoteVerifierKey {
  /** Whether `signature` over `message` is this key's. */
  verify(message: Uint8Array, signature: Uint8Array): boolean;
}

/** The check {@link openNote} and {@link openCheckpointNote} take, made of `verifiers`: each key checks its own signatures. */
export const verifyWith =
  (verifiers: readonly NoteVerifier[]) =>
  (key: NoteVerifierKey, message: Uint8Array, signature: Uint8Array): boolean =>
    verifiers.some((verifier) => verifier === key && verifier.verify(message, signature));

/** A key's 32 public bytes as lower-case hex: what tells two keys apart, whatever they are named. */
export const publicKeyHex = (key: Pick<NoteVerifierKey, 'publicKey'>): string =>
  Array.from(key.publicKey, (b) => b.toString(16).padStart(2, '0')).join('');

/** A key id as a verifier key line writes it: 8 lower-case hex digits. */
export const hex8 = (keyId: number): string => keyId.toString(16).padStart(8, '0');
const hexByte = (byte: number) => `0x${byte.toString(16).padStart(2, '0')}`;

/**
 * The verifier key line: `NAME+KEY_ID_HEX+BASE64(ALGORITHM ‖ PUBLIC_KEY)`, `algorithm` 0x01 for
 * a note's Ed25519 key, 0x04 for a cosigner's.
 */
export function verifierKeyLine(
  sha256: Sha256,
  name: string,
  publicKey: Uint8Array,
  algorithm = ED25519,
): string {
  if (!isNoteName(name)) throw new NoteError(`${JSON.stringify(name)} cannot name a key: no spaces, no +`);
  if (publicKey.length !== 32) throw new NoteError('an Ed25519 public key is 32 bytes');
  const id = hex8(noteKeyId(sha256, name, publicKey, algorithm));
  return `${name}+${id}+${toBase64(concat(Uint8Array.of(algorithm), publicKey))}`;
}

/**
 * A verifier key line read from outside, or what is wrong with it; its key id is checked against
 * its key. `algorithm` is the key type byte it must carry: 0x01 (a note's Ed25519 key), or 0x04
 * for a cosigner's Ed25519 key (tlog-cosignature/v1).
 */
export function parseVerifierKey(
  sha256: Sha256,
  line: string,
  algorithm = ED25519,
): NoteVerifierKey | { readonly invalid: string } {
  // NAME+KEYID+KEY: the name and the id hold no +, the base64 key may.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/.exec(line.trim());
  if (!match) return { invalid: 'a verifier key is NAME+KEYID+KEY' };
  const [, name = '', id = '', key = ''] = match;
  if (!isNoteName(name)) return { invalid: 'its name is not a key name' };
  if (!/^[0-9a-f]{8}$/.test(id)) return { invalid: 'its key id is not 8 lower-case hex digits' };
  const bytes = fromBase64(key);
  if (bytes === undefined || bytes.length !== 33 || bytes[0] !== algorithm) {
    return { invalid: `its key is not an Ed25519 key (${hexByte(algorithm)} and 32 bytes, base64)` };
  }
  const publicKey = bytes.slice(1);
  const keyId = Number.parseInt(id, 16);
  if (noteKeyId(sha256, name, publicKey, algorithm) !== keyId)
    return { invalid: 'its key id does not match its name and key' };
  return { name, keyId, publicKey };
}

/** A note that is not well formed, or a key that cannot sign one. */
export class NoteError extends Error {
  override readonly name = 'NoteError';
}

/** Signs `text` (which must end in a newline) as a signed note by the key `name`/`keyId`. */
export function signNote(
  text: string,
  key: { readonly name: string; readonly keyId: number; sign(message: Uint8Array): Uint8Array },
): string {
  if (!text.endsWith('\n')) throw new NoteError('a note text ends with a newline');
  if (hasControl(text)) throw new NoteError('a note text holds no control characters');
  // What openNote refuses is not signed: a note the signer writes, its reader opens.
  if (notUtf8Text(text)) throw new NoteError('a note text holds no lone surrogate and no U+FFFD');
  const id = new Uint8Array(4);
  new DataView(id.buffer).setUint32(0, key.keyId);
  const signature = key.sign(encoder.encode(text));
  return `${text}\n— ${key.name} ${toBase64(concat(id, signature))}\n`;
}

/**
 * A signature line (`— NAME BASE64(KEY_ID ‖ SIGNATURE)`, without its newline) read as Go's
 * note.Open reads one: the name before the first space, the base64 after it, at least 5 bytes;
 * undefined when it is not one. Shared by the notes and the cosignatures a witness answers with.
 */
export function signatureLineParts(
  line: string,
): { readonly name: string; readonly keyId: number; readonly signature: Uint8Array } | undefined {
  if (!line.startsWith('— ')) return undefined;
  // The name is what comes before the first space, the signature all after it.
  const rest = line.slice(2);
  const space = rest.indexOf(' ');
  const name = space < 0 ? rest : rest.slice(0, space);
  const encoded = space < 0 ? '' : rest.slice(space + 1);
  const decoded = fromBase64(encoded);
  if (!isSignatureName(name) || encoded === '' || decoded === undefined || decoded.length < 5)
    return undefined;
  const keyId = new DataView(decoded.buffer, decoded.byteOffset, 4).getUint32(0);
  return { name, keyId, signature: decoded.slice(4) };
}

/**
 * Why a note was refused, for a reader to act on (never its message's words): `malformed`, not
 * a signed note; `bad-signature`, a signature by a key given does not verify; `no-key`, no
 * signature is by a key given (signed by another key, or under another name).
 */
export type NoteRefusal = 'malformed' | 'bad-signature' | 'no-key';

export type OpenedNote =
  | { readonly ok: true; readonly text: string; readonly verifiedBy: readonly string[] }
  | { readonly ok: false; readonly why: NoteRefusal; readonly reason: string };

/**
 * Checks a signed note: well formed (signatures after the last blank line, each `— NAME
 * BASE64`), and signed by at least one of `keys`. A signature by a known key that does not
 * verify fails the note; signatures by other keys are ignored, as the format asks.
 */
export function openNote(
  message: string,
  keys: readonly NoteVerifierKey[],
  verify: (key: NoteVerifierKey, message: Uint8Array, signature: Uint8Array) => boolean,
): OpenedNote {
  const malformed = (reason: string): OpenedNote => ({ ok: false, why: 'malformed', reason });
  // As Go's note.Open, step for step (golang.org/x/mod/sumdb/note), so that the two open the
  // same notes and refuse the same ones (test/adapters/crypto/hostile-notes.test.ts).
  // U+FFFD is refused too: a note read from bytes decodes any that are not UTF-8 to it, which
  // Go refuses. (A genuine U+FFFD, which Go takes, is refused here: the one difference, closed.)
  // So is a lone surrogate (a note taken from JSON may hold one): no bytes are that text.
  if (hasControl(message) || notUtf8Text(message))
    return malformed('the note holds a control character, or bytes that are not UTF-8');
  const split = message.lastIndexOf('\n\n');
  if (split < 0) return malformed('the note has no blank line before its signatures');
  const text = message.slice(0, split + 1);
  const signatures = message.slice(split + 2);
  if (signatures.length === 0 || !signatures.endsWith('\n'))
    return malformed('the note has no signature lines, or they do not end with a newline');
  const verifiedBy: string[] = [];
  const seen = new Set<string>();
  const bytes = encoder.encode(text);
  let count = 0;
  for (const line of signatures.slice(0, -1).split('\n')) {
    if (!line.startsWith('— '))
      return malformed(`a signature line does not begin "— ": ${JSON.stringify(line.slice(0, 80))}`);
    const parts = signatureLineParts(line);
    if (parts === undefined) {
      return malformed(`a signature line is not "— NAME BASE64": ${JSON.stringify(line.slice(0, 80))}`);
    }
    if (++count > MAX_SIGNATURES) return malformed(`the note has more than ${MAX_SIGNATURES} signatures`);
    const { name, keyId, signature } = parts;
    const key = keys.find((k) => k.name === name && k.keyId === keyId);
    if (key === undefined) continue;
    // A key's second signature is not looked at: the first one counts, as Go drops repeats.
    const signer = `${name}+${hex8(keyId)}`;
    if (seen.has(signer)) continue;
    seen.add(signer);
    if (!verify(key, bytes, signature)) {
      return {
        ok: false,
        why: 'bad-signature',
        reason: `the signature of ${signer} does not verify: the note was changed`,
      };
    }
    verifiedBy.push(signer);
  }
  if (verifiedBy.length === 0)
    return { ok: false, why: 'no-key', reason: 'no signature on the note is by a key given' };
  return { ok: true, text, verifiedBy };
}

/**
 * The text a note signs, its signatures unchecked: for the signer's own stored notes, whose
 * root a proof is checked against before it is handed out (the reader checks the signature).
 */
export function noteTextOf(message: string): string | undefined {
  const split = message.lastIndexOf('\n\n');
  return split < 0 ? undefined : message.slice(0, split + 1);
}

/** The signature lines of a signed note, each `— NAME BASE64` without its newline; none when it has no signature block. */
export function signatureLinesOf(note: string): string[] {
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return [];
  return note
    .slice(split + 2)
    .split('\n')
    .filter((line) => line.length > 0);
}

/** A tlog-checkpoint's body: the log, its size, its root, and any extension lines. */
export interface CheckpointBody {
  readonly origin: string;
  readonly size: number;
  readonly root: Hash;
  readonly extensions: readonly string[];
}

/** The checkpoint note text: `ORIGIN\nSIZE\nBASE64(ROOT)\n`. */
export function checkpointText(origin: string, size: number, root: Hash): string {
  if (!isNoteName(origin))
    throw new NoteError(`${JSON.stringify(origin)} cannot be a log's origin: no spaces, no +`);
  if (!Number.isSafeInteger(size) || size < 0) throw new NoteError(`${size} is not a tree size`);
  if (root.length !== 32) throw new NoteError('a root is a 32-byte SHA-256');
  return `${origin}\n${size}\n${toBase64(root)}\n`;
}

/** A checkpoint note's text read, or what is wrong with it. */
export function parseCheckpointText(text: string): CheckpointBody | { readonly invalid: string } {
  if (!text.endsWith('\n')) return { invalid: 'a checkpoint ends with a newline' };
  const [origin, size, root, ...extensions] = text.slice(0, -1).split('\n');
  if (origin === undefined || !isNoteName(origin) || origin.length === 0)
    return { invalid: 'its first line is not an origin' };
  if (size === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(size) || !Number.isSafeInteger(Number(size))) {
    return { invalid: 'its second line is not a tree size' };
  }
  const hash = root === undefined ? undefined : fromBase64(root);
  if (hash === undefined || hash.length !== 32)
    return { invalid: 'its third line is not a base64 SHA-256 root' };
  if (extensions.some((line) => line.length === 0)) return { invalid: 'it has an empty extension line' };
  return { origin, size: Number(size), root: hash, extensions };
}

/**
 * The checkpoint body a note carries, its signatures unchecked (a signer's own stored notes, or
 * a name to compare before the note is opened), or why it carries none.
 */
export function checkpointBodyOf(note: string): CheckpointBody | { readonly invalid: string } {
  const text = noteTextOf(note);
  return text === undefined ? { invalid: 'it has no signature lines' } : parseCheckpointText(text);
}

/** A checkpoint note as its reader stood against it: opened, or which step refused it and why. */
export type OpenedCheckpointNote =
  | { readonly ok: true; readonly body: CheckpointBody; readonly verifiedBy: readonly string[] }
  | {
      readonly ok: false;
      readonly step: 'signature' | 'body';
      readonly why: NoteRefusal | 'not-a-checkpoint';
      readonly reason: string;
    };

/**
 * The one way a checkpoint is read: the note opened with `keys` (see {@link openNote}), then
 * its text read as a checkpoint body. Whether the body's origin is the log the reader meant,
 * and what its size and root must be, are the reader's to check.
 */
export function openCheckpointNote(
  message: string,
  keys: readonly NoteVerifierKey[],
  verify: (key: NoteVerifierKey, message: Uint8Array, signature: Uint8Array) => boolean,
): OpenedCheckpointNote {
  const opened = openNote(message, keys, verify);
  if (!opened.ok) return { ok: false, step: 'signature', why: opened.why, reason: opened.reason };
  const body = parseCheckpointText(opened.text);
  if ('invalid' in body) return { ok: false, step: 'body', why: 'not-a-checkpoint', reason: body.invalid };
  return { ok: true, body, verifiedBy: opened.verifiedBy };
}

/** Base64, as the proofs write each hash; exported for the proof format. */
export const hashToBase64 = (hash: Hash): string => toBase64(hash);

/** A proof line read back: a 32-byte hash in base64, or undefined. */
export function hashFromBase64(text: string): Hash | undefined {
  const bytes = fromBase64(text);
  return bytes?.length === 32 ? bytes : undefined;
}
