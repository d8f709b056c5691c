// `audit archive` and `audit verify --archive` (decisions §15): the older records to a C2SP
// tlog-tiles directory, and the check of such a directory on its own.
import { hostname } from 'node:os';
import type { AuditQuery, StoredAuditRecord } from '../../../domain/audit/record.js';
import type { ArchiveTiles } from '../../../ports/archive-tiles.js';
import type { AuditLog } from '../../../ports/audit-log.js';
import { StoreError } from '../../../ports/stores.js';
import { MerkleError } from '../../../tlog/merkle.js';
import type { NoteVerifier } from '../../../tlog/note.js';
import { TILE_WIDTH } from '../../../tlog/tiles.js';
import { archivedSize, assertArchiveHolds, stillHolding, writeArchive } from '../../audit/archive.js';
import { underArchiveLock } from '../../audit/archive-lock.js';
import { verifyArchive } from '../../audit/archive-verify.js';
import {
  type ArchiveWitnessing,
  archiveCheckpointWitnessing,
  describeArchiveWitnessing,
  keptWitnessing,
  witnessedThroughStore,
} from '../../audit/archive-witnessing.js';
import { keysOfTrail } from '../../audit/continuation.js';
import { AuditProofError, newestNoted, openCheckpoint, recordAt } from '../../audit/proving.js';
import { type PolicyCheck, WitnessPolicyError } from '../../audit/witnessed.js';
import { archiveDirectory, openArchive } from '../../composition/audit-archive-tiles.js';
import { auditHashes, CheckpointKeyError, noteSigner, noteVerifier } from '../../composition/audit-keys.js';
import { auditOriginOf, ConfigError } from '../../composition/config.js';
import { auditOriginPostureProblem } from '../../composition/posture.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import {
  type ArchiveGiven,
  type NoteKeysGiven,
  noteKeysOf,
  type PolicyGiven,
  proving,
  readSigningKey,
  type StoreGiven,
  sameOriginAsTrail,
  trailPolicyOf,
} from './options.js';

const DAY_MS = 86_400_000;

/** How many records were stored before `cutoff`: records are in seq order, which is the order their times were taken in. */
async function countBefore(log: AuditLog, cutoff: Date): Promise<number> {
  // Those let go of were archived before: they are older still.
  let lo = (await log.archivedHead()).seq;
  let hi = (await log.head()).seq;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if ((await recordAt(log, mid)).record.at < cutoff) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const MIB = 1024 * 1024;
const mib = (bytes: number | undefined) => (bytes === undefined ? '?' : `${(bytes / MIB).toFixed(1)} MiB`);

/**
 * `audit archive --to DIR (--before TIME | --older-than DAYS) [--keep-in-store]`: the records
 * stored before then, rounded down to whole tiles of 256 and to the newest checkpoint, written
 * to DIR; then, unless `--keep-in-store`, the store lets go of every record DIR holds.
 * `audit archive --to DIR --let-go-only`: writes nothing, and lets go of what DIR holds (once
 * it was copied elsewhere, say). Either way DIR must be this trail's, checked by its root.
 * `--public-key PEM` (any number): the public halves of keys signed with before a rotation,
 * accepted on the archive's checkpoint and the store's; the new one is signed with
 * AUDIT_SIGNING_KEY.
 */
export async function archive(
  values: StoreGiven & {
    readonly to: string;
    readonly before?: string | undefined;
    readonly olderThan?: string | undefined;
    readonly keepInStore?: boolean | undefined;
    readonly letGoOnly?: boolean | undefined;
    /**
     * Keys signed with before AUDIT_SIGNING_KEY was rotated: the archive's checkpoint and the
     * store's may still carry only their signatures.
     */
    readonly publicKey?: readonly string[] | undefined;
  },
  io: Io,
): Promise<number> {
  const letGoOnly = values.letGoOnly === true;
  if (letGoOnly && (values.before ?? values.olderThan ?? values.keepInStore) !== undefined) {
    throw new UsageError(
      '--let-go-only archives nothing: it takes no --before, --older-than or --keep-in-store',
    );
  }
  if (!letGoOnly && (values.before === undefined) === (values.olderThan === undefined)) {
    throw new UsageError('audit archive needs --before TIME or --older-than DAYS (one of them)');
  }
  let cutoff = new Date(0);
  if (letGoOnly) {
    // Nothing before the epoch: nothing new is written.
  } else if (values.before !== undefined) {
    cutoff = new Date(values.before);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(values.before) || Number.isNaN(cutoff.getTime())) {
      throw new UsageError('--before must be an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z');
    }
  } else if (values.olderThan !== undefined) {
    const days = values.olderThan;
    if (!/^\d{1,5}$/.test(days)) throw new UsageError('--older-than must be a whole number of days');
    cutoff = new Date(Date.now() - Number(days) * DAY_MS);
  }
  const keyPath = io.env.AUDIT_SIGNING_KEY;
  if (!keyPath) throw new UsageError("audit archive signs the archive's checkpoint: set AUDIT_SIGNING_KEY");
  const origin = auditOriginPostureProblem(io.env);
  if (origin !== undefined) throw new ConfigError([origin]);
  const pem = readSigningKey(keyPath).toString('utf8');
  let signer: ReturnType<typeof noteSigner>;
  try {
    signer = noteSigner(pem, auditOriginOf(io.env));
  } catch (error) {
    if (error instanceof CheckpointKeyError)
      throw new CommandError(`AUDIT_SIGNING_KEY: ${keyPath}: ${error.message}`);
    throw error;
  }
  const dir = values.to;
  const earlierKeys =
    values.publicKey === undefined
      ? []
      : noteKeysOf({ publicKey: values.publicKey, origin: auditOriginOf(io.env) }, io);
  return withAuditStore(values.auditStore, io, async (log) => {
    await sameOriginAsTrail(log, {}, io);
    if (!log.archives) {
      throw new CommandError(
        'this audit store does not archive: a JSONL file keeps every record; a trail kept for years belongs in SQLite or PostgreSQL (AUDIT_STORE=sqlite:PATH or postgres://…)',
      );
    }
    // One run at a time (decisions §18): the store's lock, from before the archive's checkpoint
    // is read until after the store let go of what it covers.
    return proving(() =>
      underArchiveLock(log, `${hostname()} pid ${process.pid}`, async (lock) => {
        const before = await countBefore(log, cutoff);
        const signed = (await newestNoted(log)).body.size;
        const size = Math.floor(Math.min(before, signed) / TILE_WIDTH) * TILE_WIDTH;
        const tiles = archiveDirectory(dir);
        // Named by every origin the trail had: an archive written before a break is the old log's,
        // and goes on under the new one (its tiles are the same tree's).
        const keys = await keysOfTrail(log, [signer, ...earlierKeys], auditHashes.sha256, noteVerifier);
        const written = await writeArchive(auditHashes, log, tiles, size, signer, keys, lock);
        // Only what the archive holds, written and synced to its disk, is let go of: up to what
        // the checkpoint on the disk covers, read back now.
        let forgotten: Awaited<ReturnType<AuditLog['forget']>> | undefined;
        if (!values.keepInStore && written.to > 0) {
          const upTo = Math.min(written.to, (await archivedSize(tiles, keys)).size);
          await assertArchiveHolds(tiles, (await log.archivedHead()).seq, upTo);
          await stillHolding(lock, 'lets go of records');
          forgotten = await log.forget(upTo);
        }
        report(
          io,
          values.json,
          {
            ...written,
            before: cutoff.toISOString(),
            recordsBefore: before,
            dir,
            ...(forgotten ? { forgotten } : {}),
          },
          [
            letGoOnly
              ? `${dir} holds records 1..${written.to}, checked against the stored tree`
              : written.to === written.from
                ? `nothing to archive: ${dir} holds records 1..${written.from} already (${before} stored before ${cutoff.toISOString()}, whole tiles of ${TILE_WIDTH})`
                : `archived records ${written.from + 1}..${written.to} to ${dir} (${written.files} file(s) written)`,
            ...(forgotten
              ? [
                  `the store let go of records 1..${forgotten.upTo} (${forgotten.records} removed now); its size ${mib(forgotten.bytesBefore)} -> ${mib(forgotten.bytesAfter)}`,
                ]
              : []),
          ],
        );
        return EXIT.ok;
      }),
    );
  });
}

/**
 * `audit verify --archive DIR (--vkey V | --public-key PEM [--origin O]) [--policy FILE]`: the
 * archive on its own. With `--policy` (decisions §19), its checkpoint must also meet the
 * policy's quorum, or be extended by a checkpoint that does: one the archive keeps, shown so
 * by the archive's files alone (the store is then not opened), else a newer one of the store
 * (`--audit-store`, else AUDIT_STORE): a store that cannot be read then is a refusal (fail closed).
 */
export async function verifyArchiveCommand(
  values: StoreGiven & PolicyGiven & ArchiveGiven & { readonly archive: string },
  io: Io,
): Promise<number> {
  const keys = noteKeysOf(values, io);
  const check = await trailPolicyOf(values.policy, keys);
  const tiles = archiveDirectory(values.archive);
  const result = await verifyArchive(auditHashes, tiles, keys);
  if (!result.ok) {
    report(io, values.json, result, `audit archive BROKEN: ${result.reason}`);
    return EXIT.failure;
  }
  const intact = `audit archive intact: ${result.records} record(s) in ${result.files} file(s), its checkpoint verified`;
  if (check === undefined) {
    report(io, values.json, result, intact);
    return EXIT.ok;
  }
  const witnessing = await archiveWitnessing(tiles, keys, check, values.auditStore, io);
  if (!witnessing.ok) {
    report(
      io,
      values.json,
      { ...result, ok: false, reason: witnessing.reason },
      `audit archive NOT WITNESSED: ${witnessing.reason}`,
    );
    return EXIT.failure;
  }
  report(io, values.json, { ...result, witnessed: witnessing }, [
    intact,
    `witnessed: ${describeArchiveWitnessing(witnessing, check)}`,
  ]);
  return EXIT.ok;
}

/**
 * The archive's checkpoint against the policy: by its own cosignatures, else by a witnessed
 * checkpoint it keeps (no store), else through the store's newest witnessed checkpoint. What
 * the store cannot answer (not reachable, a hash it does not hold) is a refusal naming it, and
 * what the archive keeps.
 */
async function archiveWitnessing(
  tiles: ArchiveTiles,
  keys: readonly NoteVerifier[],
  check: PolicyCheck,
  store: string | undefined,
  io: Io,
): Promise<ArchiveWitnessing> {
  const own = await proving(() => archiveCheckpointWitnessing(tiles, keys, check));
  if (own.witnessing.refused !== undefined)
    return { ok: false, reason: `its checkpoint is refused: ${own.witnessing.refused}` };
  if (own.witnessing.met)
    return { ok: true, through: 'itself', size: own.body.size, witnesses: own.witnessing.witnesses };
  const kept = await proving(() => keptWitnessing(auditHashes, tiles, keys, check, own.body));
  if ('refused' in kept) return { ok: false, reason: kept.refused };
  if ('met' in kept) {
    const { path, size, witnesses } = kept.met;
    return { ok: true, through: 'the archive', size, witnesses, kept: path };
  }
  const unwitnessed = `its checkpoint (${own.body.size} records) is not witnessed, ${kept.short}`;
  try {
    return await withAuditStore(store, io, (log) =>
      witnessedThroughStore(
        auditHashes,
        log,
        own.body,
        check,
        (note, what) => openCheckpoint(note, keys, what).body,
        new Date(),
        unwitnessed,
      ),
    );
  } catch (error) {
    if (
      error instanceof StoreError ||
      error instanceof AuditProofError ||
      error instanceof MerkleError ||
      error instanceof WitnessPolicyError
    ) {
      return {
        ok: false,
        reason: `${unwitnessed}, and the store cannot show it extended by one that is: ${error.message}`,
      };
    }
    throw error;
  }
}

/** The archived records `filter` asks for, read from `dir` once its checkpoint is checked with the keys given. */
export async function queryArchive(
  dir: string,
  filter: AuditQuery,
  given: NoteKeysGiven,
  io: Io,
): Promise<StoredAuditRecord[]> {
  const keys = noteKeysOf(given, io);
  return proving(async () => (await openArchive(dir, keys)).query(filter));
}
