import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { signatureLinesOf } from '../../../../src/tlog/cosignature.js';
import { auditRecord } from '../../../contract/audit-log.contract.js';
import { goChecks, skipWithoutGoReference } from '../../../support/go-reference.js';
import {
  cosign,
  cosignedTrail,
  logKeys,
  ORIGIN,
  policyFile,
  run,
  witnessedSetting,
} from './cosigned-trail.js';

/**
 * Proofs against witnessed checkpoints (decisions §19): `audit prove` hands out the checkpoint
 * with its cosignatures, and with `--policy` the newest one that meets the quorum;
 * `audit verify-proof --policy`, `audit verify --since --policy` and `audit verify --archive
 * --policy` accept only what a quorum of witnesses cosigned (an archive's checkpoint through a
 * witnessed checkpoint it keeps, or else of the store, that extends it, and never when neither
 * can say; the archive alone: archive-witnessed.test.ts).
 */

const { dir, keys, w1, w2, w3, policy, storeAt } = await witnessedSetting('case-read-witnessed-proofs-');
const env = { AUDIT_ORIGIN: ORIGIN };

describe('audit prove and audit verify-proof --policy', () => {
  let store: string;
  beforeAll(async () => {
    store = storeAt('proofs');
    // 40 records witnessed by two; 60 by one only.
    await cosignedTrail(join(dir, 'proofs.db'), keys, [
      { size: 40, by: [w1, w3] },
      { size: 60, by: [w2] },
    ]);
  });
  const verifyProof = (out: string, seq: number, ...more: string[]) =>
    run([
      'audit',
      'verify-proof',
      join(out, `${seq}.tlog-proof`),
      join(out, `${seq}.entry`),
      '--vkey',
      keys.vkeyFile,
      ...more,
    ]);

  it('prove writes the checkpoint with its cosignatures; verify-proof --policy refuses it short of the quorum', async () => {
    const out = join(dir, 'newest');
    const proved = await run(['audit', 'prove', '--seq', '10', '--out', out, '--audit-store', store], env);
    expect(proved.stderr).toBe('');
    expect(proved.stdout).toMatch(/^record 10: .* \(against the checkpoint of 60 records\)\n$/);
    const file = readFileSync(join(out, '10.tlog-proof'), 'utf8');
    expect(signatureLinesOf(file).map((l) => l.split(' ')[1])).toEqual([ORIGIN, 'witness.test/w2']);
    // Without a policy the log's signature is enough; with it, the quorum is not met.
    expect((await verifyProof(out, 10)).status).toBe(0);
    const refused = await verifyProof(out, 10, '--policy', policy);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `case-read: the proof's checkpoint (60 records) is not witnessed: it does not meet the quorum 2 of (w1, w2, w3) of --policy ${policy}: cosigned by w2\n`,
    );
  });

  it('prove --policy proves against the newest checkpoint that meets the quorum; verify-proof --policy accepts it', async () => {
    const out = join(dir, 'witnessed');
    const proved = await run(
      ['audit', 'prove', '--seq', '10', '--policy', policy, '--out', out, '--audit-store', store],
      env,
    );
    expect(proved.stderr).toBe('');
    expect(proved.stdout).toMatch(/\(against the checkpoint of 40 records, cosigned by w1, w3\)\n$/);
    const verified = await verifyProof(out, 10, '--policy', policy);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(
      /^proof verified: the entry is leaf 9 \(record 10\) of .*, in its tree of 40 signed by .*, cosigned by w1, w3 \(the quorum 2 of \(w1, w2, w3\) of --policy .* met\)\n$/,
    );
    expect(verified.status).toBe(0);
    const json = JSON.parse((await verifyProof(out, 10, '--policy', policy, '--json')).stdout);
    expect(json).toEqual({ ok: true, origin: ORIGIN, index: 9, size: 40, witnesses: ['w1', 'w3'] });
  });

  it.skipIf(skipWithoutGoReference)(
    'Go checks the witnessed proof: the inclusion, and the cosignatures',
    async () => {
      const out = join(dir, 'witnessed');
      const proof = join(out, '10.tlog-proof');
      const note = join(dir, 'proof.note');
      writeFileSync(note, readFileSync(proof, 'utf8').split('\n\n').slice(1).join('\n\n'));
      const witnesses = join(dir, 'witnesses.vkeys');
      writeFileSync(witnesses, `${[w1, w2, w3].map((w) => w.vkey).join('\n')}\n`);
      expect(
        goChecks([
          `incl ${keys.vkeyFile} ${join(out, '10.entry')} ${proof}`,
          `cosig ${keys.vkeyFile} ${witnesses} ${note}`,
        ]),
      ).toEqual(['ok', 'ok 2']);
    },
  );

  it('prove --policy refuses a record after the newest witnessed checkpoint, and a trail none of whose checkpoints met it', async () => {
    const after = await run(
      ['audit', 'prove', '--seq', '50', '--policy', policy, '--out', join(dir, 'x'), '--audit-store', store],
      env,
    );
    expect(after.status).toBe(1);
    expect(after.stderr).toBe(
      `case-read: record 50 is after the newest checkpoint that meets the quorum 2 of (w1, w2, w3) of --policy ${policy} (40 records): prove it once a checkpoint after it is cosigned\n`,
    );
    const lone = storeAt('lone');
    await cosignedTrail(join(dir, 'lone.db'), keys, [{ size: 8, by: [w3] }]);
    const none = await run(
      ['audit', 'prove', '--seq', '2', '--policy', policy, '--out', join(dir, 'y'), '--audit-store', lone],
      env,
    );
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(
      /^case-read: no checkpoint to prove against: the newest checkpoint \(8 records, seq 8, \S+\) does not meet the quorum 2 of \(w1, w2, w3\) of --policy \S+: cosigned by w3; no checkpoint of this trail ever met it\n$/,
    );
    // --policy goes with a record's proof from the store only.
    const consistency = await run(
      ['audit', 'prove', '--consistency', '5', '--policy', policy, '--audit-store', store],
      env,
    );
    expect(consistency.status).toBe(2);
  });

  it('prove --policy without a key of the log opens the checkpoints with the policy’s log line, and refuses another log’s', async () => {
    const out = join(dir, 'by-policy-log');
    // No AUDIT_ORIGIN, no AUDIT_SIGNING_KEY, no --vkey: the policy's log line is the key.
    const proved = await run([
      'audit',
      'prove',
      '--seq',
      '3',
      '--policy',
      policy,
      '--out',
      out,
      '--audit-store',
      store,
    ]);
    expect(proved.stderr).toBe('');
    expect(proved.status).toBe(0);
    const other = await logKeys(mkdtempSync(join(dir, 'other-')));
    const foreign = policyFile(dir, 'foreign', other.vkey, [w1, w2, w3]);
    const refused = await run([
      'audit',
      'prove',
      '--seq',
      '3',
      '--policy',
      foreign,
      '--out',
      out,
      '--audit-store',
      store,
    ]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^case-read: the store's checkpoint at seq 60 \([^)]+\), opened with the log key of --policy \S+: no signature on the note is by a key given\n$/,
    );
  });
});

describe('audit verify --since --policy', () => {
  let store: string;
  let saved: string;
  beforeAll(async () => {
    store = storeAt('since');
    const made = await cosignedTrail(
      join(dir, 'since.db'),
      keys,
      [
        { size: 20, by: [w1] },
        { size: 30, by: [w1, w2] },
      ],
      35,
    );
    saved = join(dir, 'saved.checkpoint');
    writeFileSync(saved, made[0]?.note as string);
  });
  const since = (...more: string[]) =>
    run(['audit', 'verify', '--since', saved, '--vkey', keys.vkeyFile, '--audit-store', store, ...more]);

  it('passes when the newest checkpoint meets the quorum, naming who cosigned it and the one given', async () => {
    writeFileSync(saved, `${readFileSync(saved, 'utf8')}${cosign(w3, readFileSync(saved, 'utf8'))}\n`);
    const verified = await since('--policy', policy);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(
      /^audit trail intact since the checkpoint of 20 records: .*\nwitnessed: the newest checkpoint \(30 records\) is cosigned by w1, w2, meeting the quorum 2 of \(w1, w2, w3\) of --policy \S+; the one given by w3\n/,
    );
    expect(verified.status).toBe(0);
  });

  it('refuses a saved checkpoint whose cosignature does not verify', async () => {
    const text = readFileSync(saved, 'utf8').split('\n\n')[0] as string;
    const forged = join(dir, 'forged.checkpoint');
    const original = readFileSync(saved, 'utf8');
    // w2's cosignature of another note, carried by this one.
    writeFileSync(
      forged,
      `${original}${cosign(w2, `${text.replace('\n20\n', '\n21\n')}\n\n— x AAAAAAAA\n`)}\n`,
    );
    const refused = await run([
      'audit',
      'verify',
      '--since',
      forged,
      '--vkey',
      keys.vkeyFile,
      '--audit-store',
      store,
      '--policy',
      policy,
    ]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      /^audit checkpoints REFUSED: the checkpoint in \S+: the cosignature of witness w2 does not verify/,
    );
  });

  it('fails when the newest checkpoint is short of the quorum', async () => {
    const short = storeAt('since-short');
    const made = await cosignedTrail(join(dir, 'since-short.db'), keys, [
      { size: 20, by: [w1, w2] },
      { size: 30, by: [w2] },
    ]);
    const old = join(dir, 'short.checkpoint');
    writeFileSync(old, made[0]?.note as string);
    const refused = await run([
      'audit',
      'verify',
      '--since',
      old,
      '--vkey',
      keys.vkeyFile,
      '--audit-store',
      short,
      '--policy',
      policy,
    ]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      /^audit checkpoints NOT WITNESSED: the newest checkpoint \(30 records, seq 30, \S+\) does not meet the quorum 2 of \(w1, w2, w3\) of --policy \S+: cosigned by w2; the newest checkpoint that met it: 20 records/,
    );
  });
});

describe('audit verify --archive --policy', () => {
  let store: string;
  let archive: string;
  let older: string;
  /** The archive and the older one as a release before they kept witnessed checkpoints wrote them. */
  let bare: string;
  let olderBare: string;
  beforeAll(async () => {
    store = storeAt('archived');
    await cosignedTrail(
      join(dir, 'archived.db'),
      keys,
      [
        { size: 1000, by: [w1] },
        { size: 1290, by: [w1, w2] },
      ],
      1300,
    );
    archive = join(dir, 'archive');
    older = join(dir, 'archive-768');
    const archiveEnv = { AUDIT_SIGNING_KEY: keys.privateKey, AUDIT_ORIGIN: ORIGIN };
    const at = (i: number) => auditRecord(i).at.toISOString();
    const first = await run(
      ['audit', 'archive', '--to', archive, '--before', at(1000), '--audit-store', store],
      archiveEnv,
    );
    if (first.status !== 0) throw new Error(first.stderr);
    // A copy of the archive as it was then (768 records); the store then lets go of 1..1280.
    cpSync(archive, older, { recursive: true });
    const second = await run(
      ['audit', 'archive', '--to', archive, '--before', at(1295), '--audit-store', store],
      archiveEnv,
    );
    if (second.status !== 0) throw new Error(second.stderr);
    bare = join(dir, 'archive-bare');
    olderBare = join(dir, 'archive-768-bare');
    for (const [from, to] of [
      [archive, bare],
      [older, olderBare],
    ] as const) {
      cpSync(from, to, { recursive: true });
      rmSync(join(to, 'witnessed'), { recursive: true });
    }
  }, 60_000);
  const verifyArchive = (dirPath: string, auditStore: string, policyPath = policy) =>
    run([
      'audit',
      'verify',
      '--archive',
      dirPath,
      '--vkey',
      keys.vkeyFile,
      '--policy',
      policyPath,
      '--audit-store',
      auditStore,
    ]);

  it('accepts an archive through the witnessed checkpoint it keeps, which extends it', async () => {
    const verified = await verifyArchive(archive, storeAt('not-there'));
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(
      /\nwitnessed: its checkpoint is extended by the checkpoint of 1290 records it keeps \(witnessed\/1280\), cosigned by w1, w2, meeting the quorum/,
    );
    expect(verified.status).toBe(0);
  });

  it('accepts an archive that keeps none whose checkpoint a newer witnessed checkpoint of the store extends', async () => {
    const verified = await verifyArchive(bare, store);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toBe(
      `audit archive intact: 1280 record(s) in ${verified.stdout.match(/in (\d+) file/)?.[1]} file(s), its checkpoint verified\nwitnessed: its checkpoint is extended by the store's checkpoint of 1290 records, cosigned by w1, w2, meeting the quorum 2 of (w1, w2, w3) of --policy ${policy}\n`,
    );
    expect(verified.status).toBe(0);
    // An older archive, whose records the store let go of past its end: the store's kept hashes prove it.
    const fromOlder = await verifyArchive(olderBare, store);
    expect(fromOlder.stderr).toBe('');
    expect(fromOlder.stdout).toMatch(
      /witnessed: its checkpoint is extended by the store's checkpoint of 1290 records/,
    );
    expect(fromOlder.status).toBe(0);
  });

  it('refuses when the store cannot be read: fail closed', async () => {
    const refused = await verifyArchive(bare, storeAt('not-there'));
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      /^audit archive NOT WITNESSED: its checkpoint \(1280 records\) is not witnessed, it keeps no witnessed checkpoint that extends it \(no witnessed\/1280\), and the store cannot show it extended by one that is: /,
    );
  });

  it('refuses when the store’s witnessed checkpoints fall short: 1 of 3', async () => {
    const onlyOne = policyFile(dir, 'w1-and-w3', keys.vkey, [w1, w2, w3], 3);
    const refused = await verifyArchive(archive, store, onlyOne);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      /^audit archive NOT WITNESSED: its checkpoint \(1280 records\) is not witnessed, nor is any checkpoint it keeps that extends it \(witnessed\/1280: 1290 records, cosigned by w1, w2\), and no stored checkpoint meets the quorum 3 of \(w1, w2, w3\) of --policy \S+ to extend it: the newest checkpoint \(1290 records, seq 1290, \S+\) does not meet the quorum .*: cosigned by w1, w2; no checkpoint of this trail ever met it\n$/,
    );
  });

  it('accepts an archive whose own checkpoint carries the quorum, without the store', async () => {
    const cosigned = join(dir, 'archive-cosigned');
    cpSync(archive, cosigned, { recursive: true });
    const checkpoint = join(cosigned, 'checkpoint');
    const note = readFileSync(checkpoint, 'utf8');
    writeFileSync(checkpoint, `${note}${cosign(w2, note)}\n${cosign(w3, note)}\n`);
    const verified = await verifyArchive(cosigned, storeAt('not-there'));
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(
      /\nwitnessed: its checkpoint is witnessed: cosigned by w2, w3, meeting the quorum/,
    );
    expect(verified.status).toBe(0);
    // A forged one is refused, whatever the store says.
    writeFileSync(
      checkpoint,
      `${note}${cosign(w2, note)}\n${cosign(w3, note.replace('\n1280\n', '\n1281\n'))}\n`,
    );
    const forged = await verifyArchive(cosigned, store);
    expect(forged.status).toBe(1);
    expect(forged.stdout).toMatch(
      /^audit archive NOT WITNESSED: its checkpoint is refused: the cosignature of witness w3 does not verify/,
    );
  });
});
