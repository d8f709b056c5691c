/**
 * The subject access request's wiring in `serve` (decisions §22): its template read once, the
 * trail's archive (`AUDIT_ARCHIVE_DIR`) checked at start to be this trail's, and the
 * disclosures read from the store and the archive, proved against checkpoints signed with
 * this service's key.
 */
import { readFileSync, statSync } from 'node:fs';
import type { SubjectAccessOptions } from '../../adapters/http/subject-access.handlers.js';
import { spillFiles } from '../../adapters/spill-file/spill-file.js';
import { TrailIncompleteError } from '../../domain/errors.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import type { CheckpointSigner } from '../../ports/checkpoint-keys.js';
import { StoreError } from '../../ports/stores.js';
import { sameHash } from '../../tlog/merkle.js';
import type { NoteVerifier } from '../../tlog/note.js';
import { CHECKPOINT_FILE } from '../audit/archive.js';
import { ArchiveReader } from '../audit/archive-reader.js';
import type { AuditCheckpointing } from '../audit/checkpointing.js';
import { ContinuationError, keysOfTrail } from '../audit/continuation.js';
import { disclosuresOf } from '../audit/disclosures.js';
import { AuditProofError, storedRoot } from '../audit/proving.js';
import { TRAIL_BEHIND_RUNBOOK } from '../audit/witness-standing.js';
import { archiveDirectory } from './audit-archive-tiles.js';
import { auditHashes, noteVerifier } from './audit-keys.js';
import { ConfigError } from './config.js';

/** The template's file, beside `src/` and `dist/` in the checkout and the image (the same three levels up from either). */
export const SAR_TEMPLATE_FILE = new URL(
  '../../../templates/subject-access-request.mustache',
  import.meta.url,
);

/** Where an answer's proof hashes wait between its two passes: temporary files of the OS's temporary directory (TMPDIR). */
export const answerSpills = spillFiles();

/** The template's text, read once: the same bytes on every call. */
export const readSarTemplate = (): string => readFileSync(SAR_TEMPLATE_FILE, 'utf8');

/**
 * The archive `AUDIT_ARCHIVE_DIR` names, once checked to be this trail's: a directory, whose
 * checkpoint (if it holds one yet) is signed by this service's key and signs the tree the store
 * holds at its size; and one that holds every record the store let go of. A ConfigError naming
 * the variable otherwise.
 */
export async function checkedArchive(
  dir: string | undefined,
  log: AuditLog,
  keys: readonly NoteVerifier[],
  /** What names the directory in messages: the variable, or a command's option. */
  name = 'AUDIT_ARCHIVE_DIR',
): Promise<ArchiveTiles | undefined> {
  if (dir === undefined) return undefined;
  const refuse = (why: string) => new ConfigError([`${name}: ${dir} ${why}`]);
  let isDirectory = false;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch (error) {
    throw refuse(`cannot be read (${(error as { code?: string }).code ?? 'error'})`);
  }
  if (!isDirectory) throw refuse('is not a directory');
  if (keys.length === 0) {
    throw refuse("cannot be checked: set AUDIT_SIGNING_KEY, whose key signs the archive's checkpoint");
  }
  const tiles = archiveDirectory(dir);
  const letGo = (await log.archivedHead()).seq;
  if (!(await tiles.has(CHECKPOINT_FILE))) {
    if (letGo > 0)
      throw refuse(`holds no archive (no ${CHECKPOINT_FILE}), but the store let go of records 1..${letGo}`);
    return tiles;
  }
  let reader: ArchiveReader;
  try {
    reader = await ArchiveReader.open(auditHashes, tiles, keys);
  } catch (error) {
    // Signed before the key was rotated: the old key's public half opens it.
    const rotated =
      error instanceof AuditProofError && error.why === 'no-key'
        ? ` (signed before AUDIT_SIGNING_KEY was rotated? give that key's public half ${name === 'AUDIT_ARCHIVE_DIR' ? 'in AUDIT_PREVIOUS_PUBLIC_KEYS' : 'with --public-key'})`
        : '';
    throw refuse(`is not an archive of this trail: ${(error as Error).message}${rotated}`);
  }
  if (reader.size < letGo)
    throw refuse(`holds records 1..${reader.size}, but the store let go of 1..${letGo}`);
  // The archive as a witness of the trail: a store restored short does not reach its checkpoint.
  const treeSize = await log.treeSize();
  if (treeSize < reader.size)
    throw refuse(
      `holds a checkpoint of ${reader.size} records, and the audit store's trail has ${treeSize}: the store was restored from a backup or failed over short, and every answer would be recorded on a trail known to be short; see ${TRAIL_BEHIND_RUNBOOK}`,
    );
  const stored = await storedRoot(auditHashes, log, reader.size).catch(() => undefined);
  if (stored === undefined || !sameHash(stored.root, reader.checkpoint.root)) {
    throw refuse(
      `is not an archive of this trail: the tree of its ${reader.size} records is not the stored one`,
    );
  }
  return tiles;
}

export interface SubjectAccessParts {
  readonly log: AuditLog;
  /** The case store when it keeps copies; undefined for the upstream, which holds none. */
  readonly caseCopies: CaseRepository | undefined;
  readonly signer: CheckpointSigner | undefined;
  readonly checkpointing: AuditCheckpointing | undefined;
  readonly archiveDir: string | undefined;
  /**
   * The public halves of the keys `AUDIT_SIGNING_KEY` replaced (`AUDIT_PREVIOUS_PUBLIC_KEYS`):
   * what they signed before the rotation (the archive's checkpoint and crn index) is opened
   * with them; every answer's checkpoint is the current key's.
   */
  readonly previousKeys?: readonly NoteVerifier[] | undefined;
}

/** What the subject access routes are handed in `serve`. */
export async function subjectAccessOf(parts: SubjectAccessParts): Promise<SubjectAccessOptions> {
  const template = readSarTemplate();
  const now = () => new Date();
  const signing = parts.signer === undefined ? undefined : noteVerifier(parts.signer.note);
  // Named by every origin the trail had (a continued trail's archive is the log before's).
  const keys = await keysOfTrail(
    parts.log,
    signing === undefined ? [] : [signing, ...(parts.previousKeys ?? [])],
    auditHashes.sha256,
    noteVerifier,
  ).catch((error: unknown) => {
    if (error instanceof ContinuationError) throw new StoreError(`AUDIT_STORE: ${error.message}`);
    throw error;
  });
  const archive = await checkedArchive(parts.archiveDir, parts.log, keys);
  if (parts.signer === undefined) {
    // No key: no checkpoint this service could prove a record against, or check one with.
    return {
      template,
      now,
      caseCopies: parts.caseCopies,
      disclosures: {
        of: () =>
          Promise.reject(
            new TrailIncompleteError(
              'AUDIT_SIGNING_KEY is not set: no record can be proved against a signed checkpoint',
            ),
          ),
      },
    };
  }
  const checkpointing = parts.checkpointing;
  return {
    template,
    now,
    caseCopies: parts.caseCopies,
    disclosures: disclosuresOf({
      hashes: auditHashes,
      log: parts.log,
      keys,
      signing,
      archive,
      checkpointNow: checkpointing === undefined ? undefined : () => checkpointing.checkpointUnderThisKey(),
      spill: answerSpills,
    }),
  };
}
