// `audit prove --consistency` (decisions §14, §15): the tree of the trail, or of an archive,
// shown to extend the tree of an older size, by the consistency proof's hashes.
import { hashToBase64 } from '../../../tlog/note.js';
import { newestNoted, proveConsistency } from '../../audit/proving.js';
import { openArchive } from '../../composition/audit-archive-tiles.js';
import { auditHashes } from '../../composition/audit-keys.js';
import { withAuditStore } from '../command-stores.js';
import { EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import { type ArchiveGiven, noteKeysOf, proving, type StoreGiven, sameOriginAsTrail } from './options.js';

/**
 * `audit prove --consistency OLD [--size NEW]`: the hashes (base64, one a line) proving the
 * tree of `newSize` records (else the newest checkpoint's) extends the tree of `oldSize`,
 * checked against the signed root before they are printed; with `--archive DIR`, from the
 * archive's tiles up to its own checkpoint (no `--size`).
 */
export async function proveConsistencyAsked(
  oldSize: number,
  newSize: number | undefined,
  values: StoreGiven & ArchiveGiven,
  io: Io,
): Promise<number> {
  if (values.archive !== undefined) {
    if (newSize !== undefined)
      throw new UsageError("--archive proves up to the archive's checkpoint: no --size");
    const keys = noteKeysOf(values, io);
    const dir = values.archive;
    const reader = await proving(async () => openArchive(dir, keys));
    const proof = await proving(async () => reader.proveConsistency(oldSize));
    report(
      io,
      values.json,
      { oldSize, newSize: reader.size, proof: proof.map(hashToBase64) },
      proof.map(hashToBase64),
    );
    return EXIT.ok;
  }
  return withAuditStore(values.auditStore, io, async (log) => {
    await sameOriginAsTrail(log, values, io);
    const signed = (await proving(() => newestNoted(log))).body;
    const size = newSize ?? signed.size;
    const proof = await proving(() => proveConsistency(auditHashes, log, oldSize, size, signed));
    report(
      io,
      values.json,
      { oldSize, newSize: size, proof: proof.map(hashToBase64) },
      proof.map(hashToBase64),
    );
    return EXIT.ok;
  });
}
