import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { signatureLinesOf } from '../../../../src/tlog/cosignature.js';
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
 * The audit commands against a witness policy (decisions §19): `audit checkpoint` prints the
 * cosignatures kept with the newest checkpoint, `audit checkpoints` names who cosigned each,
 * and `audit verify --policy` passes only when the newest checkpoint meets the quorum with
 * cosignatures that verify, naming the quorum, who did cosign, and the newest that met it.
 */

const { dir, keys, w1, w2, w3, policy, storeAt } = await witnessedSetting('case-read-witnessed-');
const HOUR = 3_600_000;

describe('audit checkpoint and audit checkpoints', () => {
  let store: string;
  beforeAll(async () => {
    store = storeAt('shown');
    await cosignedTrail(join(dir, 'shown.db'), keys, [
      { size: 10, by: [w1, w2, w3] },
      { size: 20, by: [w3] },
      { size: 30, by: [w1, w2] },
    ]);
  });

  it('prints the newest checkpoint as one signed note: the log’s signature, then every cosignature', async () => {
    const shown = await run(['audit', 'checkpoint', '--audit-store', store]);
    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    const note = shown.stdout;
    expect(note).toMatch(new RegExp(`^${ORIGIN}\\n30\\n`));
    const names = signatureLinesOf(note).map((line) => line.split(' ')[1]);
    expect(names).toEqual([ORIGIN, 'witness.test/w1', 'witness.test/w2']);

    const json = JSON.parse((await run(['audit', 'checkpoint', '--json', '--audit-store', store])).stdout);
    expect(json).toMatchObject({ seq: 30, note });
    expect(json.cosignatures).toEqual(signatureLinesOf(note).slice(1));
  });

  it.skipIf(skipWithoutGoReference)(
    'Go’s note.Open with a cosignature/v1 verifier opens what it prints',
    async () => {
      const noteFile = join(dir, 'shown.note');
      writeFileSync(noteFile, (await run(['audit', 'checkpoint', '--audit-store', store])).stdout);
      const witnesses = join(dir, 'witnesses.vkeys');
      writeFileSync(witnesses, `${[w1, w2, w3].map((w) => w.vkey).join('\n')}\n`);
      const changed = join(dir, 'changed.note');
      writeFileSync(changed, readFileSync(noteFile, 'utf8').replace('\n30\n', '\n31\n'));
      expect(
        goChecks([
          `cosig ${keys.vkeyFile} ${witnesses} ${noteFile}`,
          `cosig ${keys.vkeyFile} ${witnesses} ${changed}`,
        ]),
      ).toEqual(['ok 2', expect.stringMatching(/^fail: /)]);
    },
  );

  it('names who cosigned each checkpoint; with --policy, the witnesses that verify and the quorum', async () => {
    const listed = (await run(['audit', 'checkpoints', '--audit-store', store])).stdout.trimEnd().split('\n');
    expect(listed).toHaveLength(3);
    expect(listed[0]).toMatch(/^10 .* cosigned by witness\.test\/w1, witness\.test\/w2, witness\.test\/w3$/);
    expect(listed[1]).toMatch(/^20 .* cosigned by witness\.test\/w3$/);

    const judged = await run(['audit', 'checkpoints', '--policy', policy, '--audit-store', store]);
    expect(judged.status).toBe(0);
    const lines = judged.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/witnesses w1, w2, w3: quorum 2 of \(w1, w2, w3\) met$/);
    expect(lines[1]).toMatch(/witnesses w3: quorum 2 of \(w1, w2, w3\) NOT met$/);
    expect(lines[2]).toMatch(/witnesses w1, w2: quorum 2 of \(w1, w2, w3\) met$/);

    const json = (
      await run(['audit', 'checkpoints', '--json', '--policy', policy, '--audit-store', store])
    ).stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(json[1]).toMatchObject({
      seq: 20,
      cosignedBy: ['witness.test/w3'],
      policy: { quorum: '2 of (w1, w2, w3)', witnesses: ['w3'], quorumMet: false },
    });
    expect(json[1].cosignatures).toHaveLength(1);
  });
});

describe('audit verify --policy', () => {
  const verify = (store: string, policyPath = policy, ...more: string[]) =>
    run([
      'audit',
      'verify',
      '--public-key',
      keys.publicKey,
      '--origin',
      ORIGIN,
      '--policy',
      policyPath,
      '--audit-store',
      store,
      ...more,
    ]);

  it('passes when the newest checkpoint carries 2 of 3 cosignatures that verify', async () => {
    const store = storeAt('met');
    await cosignedTrail(
      join(dir, 'met.db'),
      keys,
      [
        { size: 12, by: [w1] },
        { size: 24, by: [w2, w3] },
      ],
      30,
    );
    const verified = await verify(store);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toMatch(
      /^audit chain intact: 30 record\(s\), 2 signed checkpoint\(s\) verified\n/,
    );
    expect(verified.stdout).toContain(
      `witnessed: the newest checkpoint (24 records) is cosigned by w2, w3, meeting the quorum 2 of (w1, w2, w3) of --policy ${policy}`,
    );
    expect(verified.status).toBe(0);
    const json = JSON.parse((await verify(store, policy, '--json')).stdout);
    expect(json).toMatchObject({
      ok: true,
      witnessed: { quorum: '2 of (w1, w2, w3)', witnesses: ['w2', 'w3'] },
    });
  });

  it('fails with 1 of 3, naming the quorum, who did cosign, and the newest checkpoint that met it, its size and age', async () => {
    const store = storeAt('short');
    await cosignedTrail(join(dir, 'short.db'), keys, [
      { size: 10, by: [w1, w3], at: new Date(Date.now() - 3 * HOUR - 60_000) },
      { size: 20, by: [w3], at: new Date(Date.now() - HOUR) },
    ]);
    const refused = await verify(store);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      new RegExp(
        `^audit checkpoints NOT WITNESSED: the newest checkpoint \\(20 records, seq 20, [^)]+\\) does not meet the quorum 2 of \\(w1, w2, w3\\) of --policy ${policy}: cosigned by w3; the newest checkpoint that met it: 10 records, signed \\S+, 3 h 1 min ago, cosigned by w1, w3\\n$`,
      ),
    );
    const json = JSON.parse((await verify(store, policy, '--json')).stdout);
    expect(json).toMatchObject({
      ok: false,
      quorum: '2 of (w1, w2, w3)',
      witnesses: ['w3'],
      newestWitnessed: { size: 10 },
    });
  });

  it('says that no checkpoint ever met the quorum', async () => {
    const store = storeAt('never');
    await cosignedTrail(join(dir, 'never.db'), keys, [
      { size: 5, by: [] },
      { size: 9, by: [w2] },
    ]);
    const refused = await verify(store);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(/cosigned by w2; no checkpoint of this trail ever met it\n$/);
  });

  it('refuses a forged cosignature (the right name and key id, a signature over another note)', async () => {
    const store = storeAt('forged');
    const forged = (note: string) => {
      // w2's line over a note of another size: its name and key id are w2's, its signature not of this note.
      const line = cosign(
        w2,
        note.replace(/\n(\d+)\n/, (_, n) => `\n${Number(n) + 1}\n`),
      );
      return [line];
    };
    await cosignedTrail(join(dir, 'forged.db'), keys, [
      { size: 10, by: [w1, w2] },
      { size: 20, by: [w1], extra: forged },
    ]);
    const refused = await verify(store);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      /the newest checkpoint \(20 records, seq 20, [^)]+\) is refused: the cosignature of witness w2 does not verify: it was forged/,
    );
    // The older checkpoint, properly cosigned, is the newest that met the quorum.
    expect(refused.stdout).toMatch(/the newest checkpoint that met it: 10 records/);
    const listed = await run(['audit', 'checkpoints', '--policy', policy, '--audit-store', store]);
    expect(listed.stdout.trimEnd().split('\n')[1]).toMatch(
      /witnesses w1: REFUSED: the cosignature of witness w2 does not verify/,
    );
  });

  it('refuses a policy whose log line is not this trail’s key, naming the line, before reading the store', async () => {
    const other = await logKeys(mkdtempSync(join(dir, 'other-')));
    const foreign = policyFile(dir, 'foreign-policy', other.vkey, [w1, w2, w3]);
    const refused = await verify(storeAt('does-not-exist'), foreign);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `case-read: --policy ${foreign} is not this trail's policy: line 2: the log "${ORIGIN}" has a key that is not this trail's\n`,
    );
  });

  it('names a policy file that is not one, and its line', async () => {
    const bad = join(dir, 'bad-policy');
    writeFileSync(bad, `log ${keys.vkey}\nwitness w1 ${w1.vkey}\ngroup g 2 w1 w9\nquorum g\n`);
    const refused = await verify(storeAt('met'), bad);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe(
      `case-read: --policy ${bad}: line 3: "w9" is not defined on an earlier line\n`,
    );
    const missing = await verify(storeAt('met'), join(dir, 'no-such-policy'));
    expect(missing.stderr).toBe(
      `case-read: --policy ${join(dir, 'no-such-policy')} cannot be read (ENOENT)\n`,
    );
  });

  it('without --public-key, opens the newest checkpoint with the policy’s log line for the trail’s origin', async () => {
    const alone = (store: string, policyPath = policy) =>
      run(['audit', 'verify', '--policy', policyPath, '--audit-store', store]);
    const met = await alone(storeAt('met'));
    expect(met.stderr).toBe('');
    expect(met.stdout).toMatch(
      /^audit chain intact: 30 record\(s\)\nwitnessed: the newest checkpoint \(24 records\) is cosigned by w2, w3, meeting the quorum/,
    );
    expect(met.status).toBe(0);
    const short = await alone(storeAt('short'));
    expect(short.status).toBe(1);
    expect(short.stdout).toMatch(
      /^audit checkpoints NOT WITNESSED: .* cosigned by w3; the newest checkpoint that met it: 10 records/,
    );
    // A policy whose log line for the origin is another key: the trail's checkpoints do not open with it.
    const other = await logKeys(mkdtempSync(join(dir, 'other-')));
    const foreign = policyFile(dir, 'foreign-alone', other.vkey, [w1, w2, w3]);
    const refused = await alone(storeAt('met'), foreign);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^case-read: the store's checkpoint at seq 24 \\([^)]+\\), opened with the log key of --policy ${foreign}: no signature on the note is by a key given\n$`,
      ),
    );
  });

  it('quorum none: any checkpoint with a note passes', async () => {
    const none = policyFile(dir, 'none-policy', keys.vkey, [w1], 'none');
    const passed = await verify(storeAt('never'), none);
    expect(passed.status).toBe(0);
    expect(passed.stdout).toMatch(
      /witnessed: the newest checkpoint \(9 records\) is cosigned by no witness of the policy, meeting the quorum none/,
    );
  });
});
