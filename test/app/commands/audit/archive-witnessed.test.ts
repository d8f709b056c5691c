import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { noteSigner } from '../../../../src/adapters/crypto/note-keys.js';
import { checkpointText, signNote } from '../../../../src/tlog/note.js';
import { auditRecord } from '../../../contract/audit-log.contract.js';
import { cosign, cosignedTrail, ORIGIN, policyFile, run, witnessedSetting } from './cosigned-trail.js';

/**
 * `audit verify --archive --policy` with no store (decisions §15, §19): `audit archive` keeps
 * beside the archive's checkpoint the store's checkpoints a witness cosigned at or after its
 * size (`witnessed/N`), each with the consistency proof from the archive's tree to it; the
 * archive is then held to the policy from its own files, the store deleted. A kept checkpoint
 * that the archive's tiles do not show consistent, a changed proof, a forged cosignature, and
 * a quorum the kept ones fall short of are refused, naming what could not be verified.
 */

const { dir, keys, w1, w2, w3, policy } = await witnessedSetting('case-read-archive-witnessed-');
const db = join(dir, 'trail.db');
const deleted = `sqlite:${db}`;
/** The archive of 512 records, written in two runs (256, then 512); the store then deleted. */
const archive = join(dir, 'archive');
/** The archive as its first run left it: 256 records. */
const first = join(dir, 'archive-256');
const KEPT = 'witnessed/512';

beforeAll(async () => {
  // 300 records cosigned by w1 and w2, 520 by w1, 700 by w1 and w3, 800 by none.
  await cosignedTrail(db, keys, [
    { size: 300, by: [w1, w2] },
    { size: 520, by: [w1] },
    { size: 700, by: [w1, w3] },
    { size: 800, by: [] },
  ]);
  const archiveEnv = { AUDIT_SIGNING_KEY: keys.privateKey, AUDIT_ORIGIN: ORIGIN };
  const before = (i: number) => auditRecord(i).at.toISOString();
  for (const at of [300, 700]) {
    const archived = await run(
      ['audit', 'archive', '--to', archive, '--before', before(at), '--audit-store', deleted],
      archiveEnv,
    );
    if (archived.status !== 0) throw new Error(archived.stderr);
    // The archive as its first run left it.
    if (at === 300) cpSync(archive, first, { recursive: true });
  }
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
}, 60_000);

const verify = (archiveDir: string, ...more: string[]) =>
  run([
    'audit',
    'verify',
    '--archive',
    archiveDir,
    '--vkey',
    keys.vkeyFile,
    '--audit-store',
    deleted,
    ...more,
  ]);

/** A copy of the archive, `change` made to its kept checkpoints of 512 records (as JSON). */
function changed(
  name: string,
  change: (kept: { witnessed: { note: string; consistency: string[] }[] }) => void,
) {
  const copy = join(dir, name);
  cpSync(archive, copy, { recursive: true });
  const path = join(copy, KEPT);
  const kept = JSON.parse(readFileSync(path, 'utf8'));
  change(kept);
  writeFileSync(path, `${JSON.stringify(kept)}\n`);
  return copy;
}

describe('audit verify --archive --policy from the archive alone', () => {
  it('passes with the store deleted: a checkpoint the archive keeps meets the quorum and extends it', async () => {
    const verified = await verify(archive, '--policy', policy);
    expect(verified.stderr).toBe('');
    expect(verified.stdout).toBe(
      `audit archive intact: 512 record(s) in ${verified.stdout.match(/in (\d+) file/)?.[1]} file(s), its checkpoint verified\nwitnessed: its checkpoint is extended by the checkpoint of 700 records it keeps (${KEPT}), cosigned by w1, w3, meeting the quorum 2 of (w1, w2, w3) of --policy ${policy}\n`,
    );
    expect(verified.status).toBe(0);
    // The store was never opened: not even created again.
    expect(existsSync(db)).toBe(false);
    // Kept: those cosigned at or after the archive's size, but 520 (w1), whose cosigners 700's include.
    const sizes = (path: string) =>
      JSON.parse(readFileSync(path, 'utf8')).witnessed.map((k: { note: string }) =>
        Number(k.note.split('\n')[1]),
      );
    expect(sizes(join(archive, 'witnessed/256'))).toEqual([300, 700]);
    expect(sizes(join(archive, KEPT))).toEqual([700]);
    const json = JSON.parse((await verify(archive, '--policy', policy, '--json')).stdout);
    expect(json).toMatchObject({
      ok: true,
      records: 512,
      witnessed: { ok: true, through: 'the archive', size: 700, witnesses: ['w1', 'w3'] },
    });
    // The first run's archive keeps the checkpoints of 300 (w1, w2) and 700 (w1, w3): either meets it.
    const fromFirst = await verify(first, '--policy', policy);
    expect(fromFirst.stderr).toBe('');
    expect(fromFirst.stdout).toMatch(
      /\nwitnessed: its checkpoint is extended by the checkpoint of 700 records it keeps \(witnessed\/256\)/,
    );
    expect(fromFirst.status).toBe(0);
  });

  it('fails closed when the checkpoints it keeps fall short of the quorum and the store is gone, naming both', async () => {
    const all = policyFile(dir, 'all-three', keys.vkey, [w1, w2, w3], 3);
    const refused = await verify(archive, '--policy', all);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      new RegExp(
        `^audit archive NOT WITNESSED: its checkpoint \\(512 records\\) is not witnessed, nor is any checkpoint it keeps that extends it \\(${KEPT}: 700 records, cosigned by w1, w3\\), and the store cannot show it extended by one that is: .+\\n$`,
      ),
    );
    expect(existsSync(db)).toBe(false);
  });

  it('refuses a kept checkpoint whose cosignature does not verify, whatever the rest', async () => {
    const forged = changed('forged', (kept) => {
      const entry = kept.witnessed.at(-1) as { note: string };
      const lines = entry.note.split('\n');
      // w3's line over a note of another size.
      lines[lines.length - 2] = cosign(w3, entry.note.replace('\n700\n', '\n701\n'));
      entry.note = lines.join('\n');
    });
    const refused = await verify(forged, '--policy', policy);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      new RegExp(
        `^audit archive NOT WITNESSED: ${KEPT}: its checkpoint of 700 records is refused: the cosignature of witness w3 does not verify`,
      ),
    );
  });
});

describe('audit verify --archive checks the checkpoints it keeps against its tiles', () => {
  it('refuses a kept checkpoint the archive’s tree is not consistent with (another tree, signed and cosigned)', async () => {
    const signer = noteSigner(readFileSync(keys.privateKey, 'utf8'), ORIGIN);
    const other = changed('inconsistent', (kept) => {
      const entry = kept.witnessed.at(-1) as { note: string };
      const note = signNote(checkpointText(ORIGIN, 700, new Uint8Array(32).fill(7)), signer);
      entry.note = `${note}${cosign(w1, note)}\n${cosign(w3, note)}\n`;
    });
    for (const more of [[], ['--policy', policy]]) {
      const refused = await verify(other, ...more);
      expect(refused.status).toBe(1);
      expect(refused.stdout).toBe(
        `audit archive BROKEN: ${KEPT}: its checkpoint of 700 records is not shown to extend the archive's tree of 512 records: the file was changed, or the checkpoint is of another trail\n`,
      );
    }
  });

  it('refuses a kept proof changed', async () => {
    const other = changed('proof-changed', (kept) => {
      const entry = kept.witnessed.at(-1) as { consistency: string[] };
      entry.consistency[0] = Buffer.alloc(32, 1).toString('base64');
    });
    const refused = await verify(other, '--policy', policy);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toMatch(
      new RegExp(`^audit archive BROKEN: ${KEPT}: its checkpoint of 700 records is not shown to extend`),
    );
  });

  it('refuses a changed hash tile, and a kept file of a size the archive does not hold', async () => {
    const tile = join(dir, 'tile-changed');
    cpSync(archive, tile, { recursive: true });
    const path = join(tile, 'tile/1/000.p/2');
    const bytes = readFileSync(path);
    bytes[0] = (bytes[0] as number) ^ 1;
    writeFileSync(path, bytes);
    const broken = await verify(tile, '--policy', policy);
    expect(broken.status).toBe(1);
    expect(broken.stdout).toMatch(
      /^audit archive BROKEN: hash tiles that do not hold what the entries make: tile\/1\/000\.p\/2 changed/,
    );

    const added = join(dir, 'kept-added');
    cpSync(archive, added, { recursive: true });
    cpSync(join(added, KEPT), join(added, 'witnessed/768'));
    const refused = await verify(added);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('audit archive BROKEN: not part of the archive (added): witnessed/768\n');
  });
});
