import { generateKeyPairSync, sign } from 'node:crypto';
import fc from 'fast-check';
import { verifyNoteSignature } from '../../src/adapters/crypto/note-keys.js';
import { sha256Bytes } from '../../src/adapters/shared/sha256.js';
import { hex8, type NoteVerifier, noteKeyId, verifierKeyLine } from '../../src/tlog/note.js';
import { anyChar } from './arbitraries.js';

/**
 * Keys, note texts and signature lines for the signed-note properties: keys of node:crypto,
 * lines written from the C2SP signed-note spec (`— NAME BASE64(KEY_ID ‖ SIGNATURE)`).
 */

/** An Ed25519 note key under `name` that signs, with its verifier key line. */
export interface TestNoteKey extends NoteVerifier {
  readonly vkey: string;
  sign(message: Uint8Array): Uint8Array;
}

const encoder = new TextEncoder();

/** A new Ed25519 key named `name` (a key type byte of 0x01, or `algorithm`). */
export function testNoteKey(name: string, algorithm = 0x01): TestNoteKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(
    Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url'),
  );
  const key: NoteVerifier = {
    name,
    keyId: noteKeyId(sha256Bytes, name, raw, algorithm),
    publicKey: raw,
    verify: (message, signature) => verifyNoteSignature(key, message, signature),
  };
  return {
    ...key,
    vkey: verifierKeyLine(sha256Bytes, name, raw, algorithm),
    sign: (message) => new Uint8Array(sign(null, message, privateKey)),
  };
}

/** A key name a note may carry: no white space, no `+`, no control character, 1–40 characters. */
export const keyName: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    ),
    { minLength: 1, maxLength: 40 },
  )
  .map((chars) => chars.join('').replace(/[\s+\p{Cc}]/gu, ''))
  .filter((name) => name.length > 0);

/** A note text: lines of any characters but controls (lone surrogates and U+FFFD among them), ending in a newline. */
export const noteText: fc.Arbitrary<string> = fc
  .array(
    fc.array(anyChar, { maxLength: 30 }).map((chars) =>
      chars
        .join('')
        // biome-ignore lint/suspicious/noControlCharactersInRegex: a note's text holds none
        .replace(/[\u0000-\u001f]/g, ''),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((lines) => `${lines.join('\n')}\n`);

/** A note text as a careful writer makes one: whole Unicode scalar values, no U+FFFD. */
export const wellFormedNoteText: fc.Arbitrary<string> = noteText.map((text) =>
  text.replace(/[\ud800-\udfff\ufffd]/g, ''),
);

/** The signature line of `key` over `text` (its newline included), or of `signature` when given. */
export function signatureLine(
  key: TestNoteKey,
  text: string,
  signature?: Uint8Array,
  name = key.name,
): string {
  const id = new Uint8Array(4);
  new DataView(id.buffer).setUint32(0, key.keyId);
  const sig = signature ?? key.sign(encoder.encode(text));
  return `— ${name} ${Buffer.concat([id, sig]).toString('base64')}\n`;
}

/** `name+keyid`, as openNote names a key that verified. */
export const signerOf = (key: TestNoteKey): string => `${key.name}+${hex8(key.keyId)}`;
