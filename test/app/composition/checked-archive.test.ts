import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { SqliteAuditLog } from '../../../src/adapters/sqlite/audit-log.js';
import * as archiving from '../../../src/app/audit/archive.js';
import { archiveDirectory } from '../../../src/app/composition/audit-archive-tiles.js';
import { auditHashes, noteSigner } from '../../../src/app/composition/audit-keys.js';
import { ConfigError } from '../../../src/app/composition/config.js';
import { checkedArchive } from '../../../src/app/composition/subject-access.js';
import { signCheckpoint } from '../../../src/domain/audit/checkpoint.js';
import { auditRecord } from '../../contract/audit-log.contract.js';
import { HELD_ARCHIVE_LOCK } from '../../support/audit.js';

/**
 * The archive as the witness a trail without a policy has (issue 67, item 1): `serve` (and
 * `case-read subject-access --archive`) refuses an audit store whose trail does not reach the
 * archive's signed checkpoint, as a store restored from a backup taken before the archive was
 * written does not, saying both sizes.
 */

const ORIGIN = 'case-read.test.example/audit';
const dir = mkdtempSync(join(tmpdir(), 'case-read-checked-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `count` more records, the tree grown and a checkpoint signed. */
async function grow(log: SqliteAuditLog, count: number, sign: Awaited<ReturnType<typeof checkpointSigner>>) {
  const base = (await log.head()).seq;
  for (let i = 1; i <= count; i++) void log.append(auditRecord(base + i));
  await log.flush();
  const grown = await log.growTree();
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), sign, grown.root));
}

describe('checkedArchive', () => {
  it('refuses a store restored to before the archive, naming the archive and both sizes', async () => {
    const keys = await generateCheckpointKeys();
    const sign = await checkpointSigner(keys.privatePem, ORIGIN);
    const note = noteSigner(keys.privatePem, ORIGIN);
    const path = join(dir, 'audit.db');
    const log = SqliteAuditLog.open(path);
    await grow(log, 200, sign);
    log.close();
    // The backup, taken at 200 records.
    const backup = join(dir, 'backup.db');
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(path + suffix)) copyFileSync(path + suffix, backup + suffix);
    const live = SqliteAuditLog.open(path);
    await grow(live, 100, sign);
    const archive = join(dir, 'archive');
    await archiving.writeArchive(
      auditHashes,
      live,
      archiveDirectory(archive),
      256,
      note,
      [note],
      HELD_ARCHIVE_LOCK,
    );
    // The live store takes the archive; the backup of 200 records does not reach it.
    await expect(checkedArchive(archive, live, [note])).resolves.toBeDefined();
    live.close();
    const restored = SqliteAuditLog.open(backup);
    try {
      const refused = await checkedArchive(archive, restored, [note]).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).problems).toEqual([
        expect.stringMatching(
          /^AUDIT_ARCHIVE_DIR: .* holds a checkpoint of 256 records, and the audit store's trail has 200: the store was restored .*runbook\.md#casereadauditstorebehindwitnesses$/,
        ),
      ]);
    } finally {
      restored.close();
    }
  });
});
