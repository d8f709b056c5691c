import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { noteSigner, verifyNoteSignature } from '../../../src/adapters/crypto/note-keys.js';
import { openNote } from '../../../src/tlog/note.js';
import { goChecks, skipWithoutGoReference } from '../../support/go-reference.js';

/**
 * Signed notes opened exactly as Go's note.Open opens them (decisions §18): a table of hostile
 * notes, each opened here and by Go (golang.org/x/mod/sumdb/note, `open` in
 * test/support/go/c2sp-check): the same verdict for every one, and the same number of
 * signatures counted where both open it.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-hostile-notes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ORIGIN = 'example.org/log';
const signer = noteSigner((await generateCheckpointKeys()).privatePem, ORIGIN);
const other = noteSigner((await generateCheckpointKeys()).privatePem, 'example.org/other');
const encoder = new TextEncoder();
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** The signature line of `key` over `text`, its bytes given or made. */
function lineOf(key: typeof signer, text: string, name = key.name, signature?: Uint8Array): string {
  const id = new Uint8Array(4);
  new DataView(id.buffer).setUint32(0, key.keyId);
  const sig = signature ?? key.sign(encoder.encode(text));
  return `— ${name} ${b64(Buffer.concat([id, sig]))}\n`;
}

const TEXT = `${ORIGIN}\n5\n${b64(new Uint8Array(32))}\n`;
const good = `${TEXT}\n${lineOf(signer, TEXT)}`;
const signedText = (text: string) => `${text}\n${lineOf(signer, text)}`;
const forged = lineOf(signer, TEXT, signer.name, new Uint8Array(64));

const HOSTILE: readonly (readonly [string, string])[] = [
  ['a good note', good],
  ['CRLF line ends', good.replaceAll('\n', '\r\n')],
  ['no final newline', good.slice(0, -1)],
  ['no blank line before the signatures', `${TEXT}${lineOf(signer, TEXT)}`],
  ['100 copies of its signature', `${TEXT}\n${lineOf(signer, TEXT).repeat(100)}`],
  ['101 copies of its signature', `${TEXT}\n${lineOf(signer, TEXT).repeat(101)}`],
  [
    '100 other signatures, then its own',
    `${TEXT}\n${lineOf(other, TEXT).repeat(100)}${lineOf(signer, TEXT)}`,
  ],
  ['a + in another signature’s key name', `${good}${lineOf(other, TEXT, 'bad+name')}`],
  ['a space in a key name', `${good}— bad name ${b64(new Uint8Array(40))}\n`],
  ['a no-break space in a key name', `${good}— bad\u00a0name ${b64(new Uint8Array(40))}\n`],
  ['a next-line (U+0085) in a key name', `${good}— bad\u0085name ${b64(new Uint8Array(40))}\n`],
  ['an empty key name', `${good}—  ${b64(new Uint8Array(40))}\n`],
  ['a signature line without its dash', `${good}- ${ORIGIN} ${b64(new Uint8Array(40))}\n`],
  ['a signature of four bytes', `${good}— ${ORIGIN} ${b64(new Uint8Array(4))}\n`],
  ['a signature not base64', `${good}— ${ORIGIN} not-base64!\n`],
  ['base64 without its padding', `${good}— ${ORIGIN} ${b64(new Uint8Array(40)).replace(/=+$/, '')}\n`],
  ['its signature twice', `${good}${lineOf(signer, TEXT)}`],
  ['its signature, then a forged one by the same key', `${good}${forged}`],
  ['a forged one, then its signature', `${TEXT}\n${forged}${lineOf(signer, TEXT)}`],
  ['only another key’s signature', `${TEXT}\n${lineOf(other, TEXT)}`],
  ['a control character in the text', signedText(`${ORIGIN}\n5\x01\n${b64(new Uint8Array(32))}\n`)],
  ['a tab in the text', signedText(`${ORIGIN}\n5\t\n${b64(new Uint8Array(32))}\n`)],
  ['DEL in the text (not a control to Go)', signedText(`${ORIGIN}\n5\x7f\n${b64(new Uint8Array(32))}\n`)],
  ['a C1 control (U+0085) in the text', signedText(`${ORIGIN}\n5\u0085\n${b64(new Uint8Array(32))}\n`)],
  ['text in other scripts', signedText(`${ORIGIN}\nкот 猫 🐈\n${b64(new Uint8Array(32))}\n`)],
  ['a changed text', good.replace('\n5\n', '\n6\n')],
  ['a text of one newline', signedText('\n')],
];

describe.skipIf(skipWithoutGoReference)('signed notes opened as Go’s note.Open opens them', () => {
  it(`gives Go's verdict on each of ${HOSTILE.length} hostile notes, counting the same signatures`, () => {
    const vkey = join(dir, 'vkey');
    writeFileSync(vkey, `${signer.vkey}\n`);
    const files = HOSTILE.map(([, note], i) => {
      const file = join(dir, `note-${i}`);
      writeFileSync(file, note);
      return file;
    });
    const go = goChecks(files.map((file) => `open ${vkey} ${file}`));
    const ours = HOSTILE.map(([, note]) => {
      const opened = openNote(note, [signer], verifyNoteSignature);
      return opened.ok ? `ok ${opened.verifiedBy.length}` : 'fail';
    });
    const verdicts = HOSTILE.map(([name], i) => ({
      name,
      go: (go[i] ?? '').startsWith('fail') ? 'fail' : go[i],
      ours: ours[i],
    }));
    expect(verdicts.filter((v) => v.go !== v.ours)).toEqual([]);
    // The table holds both kinds: notes Go opens, and notes it refuses.
    expect(verdicts.filter((v) => v.ours === 'ok 1').length).toBeGreaterThanOrEqual(8);
    expect(verdicts.filter((v) => v.ours === 'fail').length).toBeGreaterThanOrEqual(15);
  }, 120_000);
});
