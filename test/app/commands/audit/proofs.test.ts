import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notePublicKey, noteSigner } from '../../../../src/adapters/crypto/note-keys.js';
import { sha256Bytes } from '../../../../src/adapters/shared/sha256.js';
import {
  appendLeaves,
  type Hash,
  inclusionRanges,
  leafHash,
  rangeHashes,
  rootOfFrontier,
  storedIndexesFor,
} from '../../../../src/tlog/merkle.js';
import { checkpointText, signNote } from '../../../../src/tlog/note.js';
import { formatTlogProof } from '../../../../src/tlog/tlog-proof.js';
import { runCli } from '../../../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-audit-proofs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ORIGIN = 'case-read.test/audit';
const privateKey = join(dir, 'audit-signing-key.pem');
const publicKey = join(dir, 'audit-signing-key.pub.pem');

beforeAll(() => {
  const made = runCli(['audit', 'keygen', '--dir', dir]);
  if (made.status !== 0) throw new Error(made.stderr);
});

describe('case-read audit vkey', () => {
  it('prints the verifier key of AUDIT_SIGNING_KEY under AUDIT_ORIGIN, the same as of its public key', () => {
    const fromPrivate = runCli(['audit', 'vkey'], { AUDIT_SIGNING_KEY: privateKey, AUDIT_ORIGIN: ORIGIN });
    expect(fromPrivate.stderr).toBe('');
    const line = fromPrivate.stdout.trim();
    expect(line).toMatch(/^case-read\.test\/audit\+[0-9a-f]{8}\+A[A-Za-z0-9+/]{43}$/);
    expect(line).toBe(notePublicKey(readFileSync(publicKey, 'utf8'), ORIGIN).vkey);
    const fromPublic = runCli(['audit', 'vkey', '--public-key', publicKey, '--origin', ORIGIN, '--json']);
    expect(JSON.parse(fromPublic.stdout)).toEqual({ vkey: line, origin: ORIGIN, keyId: line.split('+')[1] });
    // Without AUDIT_ORIGIN: the documented default, which names no real log.
    expect(runCli(['audit', 'vkey', '--public-key', publicKey]).stdout).toMatch(
      /^case-read\.invalid\/audit\+/,
    );
  });

  it('refuses AUDIT_SIGNING_KEY when others can read it, naming it, the file and its mode', () => {
    const exposed = join(dir, 'exposed-signing-key.pem');
    writeFileSync(exposed, readFileSync(privateKey), { mode: 0o644 });
    chmodSync(exposed, 0o644);
    const refused = runCli(['audit', 'vkey'], { AUDIT_SIGNING_KEY: exposed, AUDIT_ORIGIN: ORIGIN });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `case-read: AUDIT_SIGNING_KEY: ${exposed} is readable by others (mode 0644); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)\n`,
    );
    // Group-readable is allowed; a public key is no secret.
    chmodSync(exposed, 0o640);
    expect(runCli(['audit', 'vkey'], { AUDIT_SIGNING_KEY: exposed, AUDIT_ORIGIN: ORIGIN }).status).toBe(0);
    chmodSync(publicKey, 0o644);
    expect(runCli(['audit', 'vkey', '--public-key', publicKey]).status).toBe(0);
  });

  it('names what is missing or wrong', () => {
    const none = runCli(['audit', 'vkey']);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^case-read: audit vkey needs --public-key PEM, or AUDIT_SIGNING_KEY set/);
    const badOrigin = runCli(['audit', 'vkey', '--public-key', publicKey], { AUDIT_ORIGIN: 'two words' });
    expect(badOrigin.status).toBe(1);
    expect(badOrigin.stderr).toMatch(/AUDIT_ORIGIN: expected a log name without spaces or \+/);
    writeFileSync(join(dir, 'not-a-key.pem'), 'hello');
    const notKey = runCli(['audit', 'vkey', '--public-key', join(dir, 'not-a-key.pem')]);
    expect(notKey.status).toBe(1);
    expect(notKey.stderr).toBe(
      `case-read: --public-key ${join(dir, 'not-a-key.pem')}: it holds no key in PEM\n`,
    );
  });
});

describe('case-read audit verify-proof', () => {
  const signer = () => noteSigner(readFileSync(privateKey, 'utf8'), ORIGIN);
  const entries = Array.from({ length: 21 }, (_, i) =>
    new TextEncoder().encode(`[3,${i + 1},"request ${i}"]`),
  );

  /** A tree of the entries, its checkpoint signed by `key`, and the proof of entry `index` written out. */
  function proofOf(index: number, key = signer(), origin = ORIGIN) {
    const appended = appendLeaves(
      sha256Bytes,
      0,
      [],
      entries.map((e) => leafHash(sha256Bytes, e)),
    );
    const stored = new Map(appended.stored.map((hash, i) => [i, hash] as [number, Hash]));
    const ranges = inclusionRanges(index, entries.length);
    const hashes = rangeHashes(
      sha256Bytes,
      ranges,
      new Map(storedIndexesFor(ranges).map((i) => [i, stored.get(i) as Hash])),
    );
    const root = rootOfFrontier(sha256Bytes, appended.frontier);
    const checkpoint = signNote(checkpointText(origin, entries.length, root), key);
    const proof = join(dir, `${index}.tlog-proof`);
    const entry = join(dir, `${index}.entry`);
    writeFileSync(proof, formatTlogProof({ index, hashes, checkpoint }));
    writeFileSync(entry, entries[index] as Uint8Array);
    return { proof, entry, checkpoint };
  }

  it('verifies an entry against its proof and the log key, given as a line or as a file', () => {
    const vkey = signer().vkey;
    writeFileSync(join(dir, 'vkey'), `${vkey}\n`);
    const { proof, entry } = proofOf(13);
    const byLine = runCli(['audit', 'verify-proof', proof, entry, '--vkey', vkey]);
    expect(byLine.stderr).toBe('');
    expect(byLine.stdout).toMatch(
      /^proof verified: the entry is leaf 13 \(record 14\) of case-read\.test\/audit, in its tree of 21/,
    );
    const byFile = runCli(['audit', 'verify-proof', proof, entry, '--vkey', join(dir, 'vkey'), '--json']);
    expect(JSON.parse(byFile.stdout)).toEqual({ ok: true, origin: ORIGIN, index: 13, size: 21 });
  });

  it("refuses a changed entry, a changed checkpoint, another log's key, and a checkpoint of another log", () => {
    const vkey = signer().vkey;
    const { proof, entry, checkpoint } = proofOf(4);
    writeFileSync(entry, readFileSync(entry, 'utf8').replace('request 4', 'request 5'));
    const changedEntry = runCli(['audit', 'verify-proof', proof, entry, '--vkey', vkey]);
    expect(changedEntry.status).toBe(1);
    expect(changedEntry.stderr).toMatch(
      /not leaf 4 of the tree of 21 the checkpoint signs: the entry, or the proof, was changed/,
    );

    const fresh = proofOf(4);
    writeFileSync(
      fresh.proof,
      readFileSync(fresh.proof, 'utf8').replace(checkpoint, checkpoint.replace('\n21\n', '\n22\n')),
    );
    const changedNote = runCli(['audit', 'verify-proof', fresh.proof, fresh.entry, '--vkey', vkey]);
    expect(changedNote.status).toBe(1);
    expect(changedNote.stderr).toMatch(
      /the proof's checkpoint: the signature of case-read\.test\/audit\+\w{8} does not verify/,
    );

    const other = noteSigner(readFileSync(privateKey, 'utf8'), 'other.test/audit');
    const foreign = runCli(['audit', 'verify-proof', proofOf(4).proof, fresh.entry, '--vkey', other.vkey]);
    expect(foreign.stderr).toMatch(/no signature on the note is by a key given/);

    const mislabelled = proofOf(4, other, ORIGIN);
    const wrongLog = runCli([
      'audit',
      'verify-proof',
      mislabelled.proof,
      mislabelled.entry,
      '--vkey',
      other.vkey,
    ]);
    expect(wrongLog.status).toBe(1);
    expect(wrongLog.stderr).toMatch(/is of the log case-read\.test\/audit, not other\.test\/audit/);

    writeFileSync(join(dir, 'not-a-proof'), 'hello\n\nworld\n');
    const notProof = runCli(['audit', 'verify-proof', join(dir, 'not-a-proof'), fresh.entry, '--vkey', vkey]);
    expect(notProof.stderr).toMatch(/is not a c2sp\.org\/tlog-proof@v1: its first line is not/);
    expect(runCli(['audit', 'verify-proof', proof, entry]).status).toBe(2);
  });
});
