import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { notePublicKey, noteSigner, verifyNoteSignature } from '../../../src/adapters/crypto/note-keys.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import {
  appendLeaves,
  consistencyRanges,
  frontierIndexes,
  type Hash,
  inclusionRanges,
  leafHash,
  rangeHashes,
  rootOfFrontier,
  storedCount,
  storedIndexesFor,
  verifyInclusion,
} from '../../../src/tlog/merkle.js';
import {
  checkpointText,
  hashToBase64,
  openCheckpointNote,
  openNote,
  parseCheckpointText,
  parseVerifierKey,
  signNote,
  verifierKeyLine,
} from '../../../src/tlog/note.js';
import { formatTlogProof, parseTlogProof, TlogProofError } from '../../../src/tlog/tlog-proof.js';
import { goChecks, skipWithoutGoReference } from '../../support/go-reference.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-c2sp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const flipped = (bytes: Uint8Array, at: number) => Uint8Array.from(bytes, (b, i) => (i === at ? b ^ 1 : b));

describe('signed notes, against the Go reference test vectors', () => {
  // golang.org/x/mod/sumdb/note's own test key and note (note_test.go).
  const vkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const seed = Buffer.from('gQoUAtUUbI2E8kQzMPVAgOv5juF9nHT2JS/F1ccoMXM=', 'base64');
  const text =
    "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const signature =
    '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

  it('reads the verifier key, and signs the note to the byte as Go does (Ed25519 is deterministic)', () => {
    const key = parseVerifierKey(sha256Bytes, vkey);
    expect(key).toMatchObject({ name: 'PeterNeumann', keyId: 0xc74f20a3 });
    const pem = `-----BEGIN PRIVATE KEY-----\n${Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]).toString('base64')}\n-----END PRIVATE KEY-----\n`;
    const signer = noteSigner(pem, 'PeterNeumann');
    expect(signer.vkey).toBe(vkey);
    expect(signNote(text, signer)).toBe(`${text}\n${signature}`);
  });

  it('reads back a verifier key whose base64 holds a +, as Go does (only the first two + split it)', () => {
    const publicKey = new Uint8Array(32).fill(0xfb);
    const line = verifierKeyLine(sha256Bytes, 'case-read.test/audit', publicKey);
    expect(line.split('+').length).toBeGreaterThan(3);
    expect(parseVerifierKey(sha256Bytes, line)).toMatchObject({ name: 'case-read.test/audit', publicKey });
  });

  it('opens the note with the key, ignores a signature by another, and refuses one changed', () => {
    const key = parseVerifierKey(sha256Bytes, vkey);
    if ('invalid' in key) throw new Error(key.invalid);
    const enoch =
      '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';
    expect(openNote(`${text}\n${signature}${enoch}`, [key], verifyNoteSignature)).toEqual({
      ok: true,
      text,
      verifiedBy: ['PeterNeumann+c74f20a3'],
    });
    expect(
      openNote(`${text.replace('answer', 'Answer')}\n${signature}`, [key], verifyNoteSignature),
    ).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/does not verify/),
    });
    expect(openNote(`${text}\n${enoch}`, [key], verifyNoteSignature)).toMatchObject({ ok: false });
    expect(parseVerifierKey(sha256Bytes, vkey.replace('c74f20a3', 'c74f20a4'))).toEqual({
      invalid: 'its key id does not match its name and key',
    });
  });
});

describe('a note text that no bytes carry (found by test/property/note.property.test.ts)', () => {
  it('is neither signed nor opened: a lone surrogate, or U+FFFD', async () => {
    const signer = noteSigner((await generateCheckpointKeys()).privatePem, 'case-read.test/audit');
    for (const text of ['\ud800\n', 'a\udc00b\n', 'a\ufffd\n']) {
      expect(() => signNote(text, signer)).toThrow('a note text holds no lone surrogate and no U+FFFD');
      // Signed as bytes would carry it, its signature good: still refused, as not UTF-8.
      const id = Buffer.alloc(4);
      id.writeUInt32BE(signer.keyId);
      const signature = Buffer.concat([id, signer.sign(new TextEncoder().encode(text))]).toString('base64');
      expect(
        openNote(`${text}\n— ${signer.name} ${signature}\n`, [signer], verifyNoteSignature),
      ).toMatchObject({
        ok: false,
        why: 'malformed',
      });
    }
    // An astral character (a surrogate pair) is text like any other.
    expect(openNote(signNote('🐈\n', signer), [signer], verifyNoteSignature)).toMatchObject({ ok: true });
  });
});

describe.skipIf(skipWithoutGoReference)(
  'checkpoints and proofs, checked by Go’s sumdb/note and sumdb/tlog',
  () => {
    it('a checkpoint opens, every inclusion and consistency proof passes, and one changed byte fails each', async () => {
      const origin = 'case-read.test/audit';
      const keys = await generateCheckpointKeys();
      const signer = noteSigner(keys.privatePem, origin);
      expect(notePublicKey(keys.publicPem, origin).vkey).toBe(signer.vkey);
      const vkey = file('vkey', `${signer.vkey}\n`);

      // A log of 300 entries, appended in batches, a checkpoint at some sizes.
      const entry = (i: number) => new TextEncoder().encode(JSON.stringify([3, i + 1, `request-${i}`]));
      const stored = new Map<number, Hash>();
      const sizes = [1, 7, 128, 200, 300];
      const notes = new Map<number, { path: string; text: string; root: Hash }>();
      for (let n = 0; n < 300; ) {
        const count = Math.min(13, 300 - n, (sizes.find((s) => s > n) ?? 300) - n);
        const frontier = frontierIndexes(n).map((i) => stored.get(i) as Hash);
        const appended = appendLeaves(
          sha256Bytes,
          n,
          frontier,
          Array.from({ length: count }, (_, j) => leafHash(sha256Bytes, entry(n + j))),
        );
        for (const [j, hash] of appended.stored.entries()) stored.set(storedCount(n) + j, hash);
        n += count;
        if (sizes.includes(n)) {
          const root = rootOfFrontier(sha256Bytes, appended.frontier);
          const text = signNote(checkpointText(origin, n, root), signer);
          notes.set(n, { path: file(`checkpoint-${n}`, text), text, root });
        }
      }
      const hashes = (ranges: ReturnType<typeof inclusionRanges>) =>
        rangeHashes(
          sha256Bytes,
          ranges,
          new Map(storedIndexesFor(ranges).map((i) => [i, stored.get(i) as Hash])),
        );

      const checks: string[] = [];
      const expected: string[] = [];
      const expect_ = (line: string, ok: boolean) => {
        checks.push(line);
        expected.push(ok ? 'ok' : 'fail');
      };
      for (const [size, note] of notes) {
        expect_(`note ${vkey} ${note.path}`, true);
        for (const index of new Set([0, Math.floor(size / 2), size - 1])) {
          const proof = formatTlogProof({
            index,
            hashes: hashes(inclusionRanges(index, size)),
            checkpoint: note.text,
          });
          const bytes = entry(index);
          const name = `${size}-${index}`;
          expect_(`incl ${vkey} ${file(`${name}.entry`, bytes)} ${file(`${name}.tlog-proof`, proof)}`, true);
          // Our own reading of the same proof agrees.
          const parsed = parseTlogProof(proof);
          if ('invalid' in parsed) throw new Error(parsed.invalid);
          expect(
            verifyInclusion(sha256Bytes, index, size, leafHash(sha256Bytes, bytes), parsed.hashes, note.root),
          ).toBe(true);
          // One byte changed: of the entry, of a proof hash, of the checkpoint's body.
          expect_(
            `incl ${vkey} ${file(`${name}.bad-entry`, flipped(bytes, 3))} ${file(`${name}.tlog-proof`, proof)}`,
            false,
          );
          if (parsed.hashes.length > 0) {
            const bent = formatTlogProof({
              index,
              hashes: parsed.hashes.map((h, j) => (j === 0 ? flipped(h, 0) : h)),
              checkpoint: note.text,
            });
            expect_(`incl ${vkey} ${file(`${name}.entry`, bytes)} ${file(`${name}.bad-proof`, bent)}`, false);
          }
          const forged = formatTlogProof({
            index,
            hashes: parsed.hashes,
            checkpoint: note.text.replace(`\n${size}\n`, `\n${size + 1}\n`),
          });
          expect_(`incl ${vkey} ${file(`${name}.entry`, bytes)} ${file(`${name}.bad-note`, forged)}`, false);
        }
      }
      const list = [...notes.keys()];
      for (const old of list) {
        for (const cur of list.filter((n) => n > old)) {
          const proof = hashes(consistencyRanges(old, cur)).map(hashToBase64);
          const oldNote = notes.get(old)?.path;
          const newNote = notes.get(cur)?.path;
          expect_(
            `cons ${vkey} ${oldNote} ${newNote} ${file(`cons-${old}-${cur}`, `${proof.join('\n')}\n`)}`,
            true,
          );
          const bent = proof.map((h, j) =>
            j === proof.length - 1 ? hashToBase64(flipped(Buffer.from(h, 'base64'), 5)) : h,
          );
          expect_(
            `cons ${vkey} ${oldNote} ${newNote} ${file(`cons-${old}-${cur}.bad`, `${bent.join('\n')}\n`)}`,
            false,
          );
        }
      }
      const verdicts = goChecks(checks);
      expect(verdicts.map((v) => (v === 'ok' ? 'ok' : v.startsWith('fail: ') ? 'fail' : v))).toEqual(
        expected,
      );
      expect(checks.length).toBeGreaterThan(50);
      // And the checkpoint's body reads back as written.
      expect(parseCheckpointText(notes.get(300)?.text.split('\n\n')[0]?.concat('\n') ?? '')).toMatchObject({
        origin,
        size: 300,
      });
    }, 180_000);
  },
);

describe('a checkpoint note opened the one way (openCheckpointNote)', () => {
  it('opens a signed checkpoint, and says which step refused one that is not', async () => {
    const keys = await generateCheckpointKeys();
    const signer = noteSigner(keys.privatePem, 'example.org/log');
    const other = noteSigner((await generateCheckpointKeys()).privatePem, 'example.org/log');
    const root = leafHash(sha256Bytes, new Uint8Array([1]));
    const note = signNote(checkpointText('example.org/log', 1, root), signer);
    const opened = openCheckpointNote(note, [signer], verifyNoteSignature);
    expect(opened).toMatchObject({ ok: true, body: { origin: 'example.org/log', size: 1 } });
    expect(opened.ok && Buffer.from(opened.body.root).equals(Buffer.from(root))).toBe(true);
    expect(openCheckpointNote(note, [other], verifyNoteSignature)).toEqual({
      ok: false,
      step: 'signature',
      why: 'no-key',
      reason: 'no signature on the note is by a key given',
    });
    const notACheckpoint = signNote('example.org/log\nten\n', signer);
    expect(openCheckpointNote(notACheckpoint, [signer], verifyNoteSignature)).toEqual({
      ok: false,
      step: 'body',
      why: 'not-a-checkpoint',
      reason: 'its second line is not a tree size',
    });
  });
});

describe('a tlog-proof’s extra line (found by test/property/tlog-proof.property.test.ts)', () => {
  const checkpoint =
    'example.org/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— example.org/log AAAA\n';
  it('is base64, written and read: one holding a newline is refused rather than written unreadable', () => {
    expect(() => formatTlogProof({ index: 0, hashes: [], checkpoint, extra: '\n' })).toThrow(
      'a tlog-proof extra is base64',
    );
    expect(() => formatTlogProof({ index: 0, hashes: [], checkpoint, extra: 'not base64!' })).toThrow(
      TlogProofError,
    );
    const written = formatTlogProof({ index: 0, hashes: [], checkpoint, extra: 'YWdl' });
    expect(parseTlogProof(written)).toEqual({ index: 0, hashes: [], checkpoint, extra: 'YWdl' });
    expect(parseTlogProof(written.replace('extra YWdl', 'extra not base64!'))).toEqual({
      invalid: 'line 2 is not "extra BASE64"',
    });
  });
});
