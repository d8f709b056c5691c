/**
 * Writes the archive's crn index (crn-index.ts) as `audit archive` writes the bundles: each
 * group's files once the group is whole, the last group's and the signed note of the archive's
 * size before its checkpoint is replaced. One group in memory at a time.
 */
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditTree } from '../../ports/audit-log.js';
import type { NoteSigner } from '../../ports/checkpoint-keys.js';
import { type Hash, leafHash, sameHash, storedIndexOf } from '../../tlog/merkle.js';
import { type NoteVerifier, openNote, signNote, verifyWith } from '../../tlog/note.js';
import { bundlePath, entriesOf, TILE_HEIGHT, TILE_WIDTH, tileRoot } from '../../tlog/tiles.js';
import { AuditArchiveError } from './archive-error.js';
import {
  CRN_GROUP_RECORDS,
  type CrnGroup,
  checkedGroupSize,
  crnGroup,
  crnIndexPaths,
  crnNotePath,
  crnsOfEntries,
  type IndexedTree,
  signedGroupDigests,
} from './crn-index.js';
import { CrnIndexMaker } from './crn-index-make.js';

/** What the index is written with: the archive run's own. */
export interface CrnIndexContext {
  readonly hashes: AuditHashes;
  /** The store's tree: the bundles read back are checked against its hashes of 256 leaves. */
  readonly log: Pick<AuditTree, 'treeHashes'>;
  readonly tiles: ArchiveTiles;
  /** The keys the archive's checkpoint (and so its index note) may be signed with. */
  readonly keys: readonly NoteVerifier[];
  /** Signs the index note, as it signs the archive's checkpoint. */
  readonly signer: NoteSigner;
  /** Puts a file once, as the archive's other files are: whether it was written (a file more). */
  readonly put: (path: string, bytes: Uint8Array) => Promise<boolean>;
  /** Refuses to go on once the run no longer holds the archive lock. */
  readonly stillHolding: () => Promise<void>;
  /** Records a group of the index covers (tests make it small). */
  readonly groupSize?: number | undefined;
}

/**
 * The SHA-256 of each group's hashes file of the index of `tree`, when it is whole: its note
 * opens with the keys and signs what its hashes files make, and every shard file is there
 * (one removed is written again by the run that finds it so). Undefined otherwise.
 */
async function wholeIndex(
  context: CrnIndexContext,
  tree: IndexedTree,
  groupSize: number,
): Promise<Hash[] | undefined> {
  let digests: Hash[];
  try {
    digests = await signedGroupDigests(context.hashes.sha256, context.tiles, context.keys, tree, groupSize);
  } catch (error) {
    if (error instanceof AuditArchiveError) return undefined;
    throw error;
  }
  for (const path of crnIndexPaths(tree.size, groupSize))
    if (!(await context.tiles.has(path))) return undefined;
  return digests;
}

/** Bundles read back between two checks that the run still holds the archive lock. */
const BUNDLES_PER_LOCK_CHECK = 64;

/**
 * One archive run's writing of the index. Opened on the archive as it is: when the note of its
 * size opens with the keys and its groups' hashes files make what it signs, the index is taken
 * as it is and only the last group is read back (from the archive's bundles) when the run adds
 * to it; otherwise (an archive written before the index, or one whose index is not whole) the
 * whole index is made again from the archive's bundles, each file compared with the one there
 * (a file of other bytes is refused, naming it). Then {@link bundle} takes each new bundle's
 * crns, and {@link seal} writes the last group and the note.
 */
export class CrnIndexWriter {
  /** Index files this run wrote. */
  written = 0;
  /** The index as the bundles taken make it (each one below). */
  private readonly made: CrnIndexMaker;

  private constructor(
    private readonly context: CrnIndexContext,
    private readonly held: IndexedTree | undefined,
    /** Whether the note of the held size was found whole: the index of that size is written. */
    private readonly sealed: boolean,
    /** The SHA-256 of each whole group's hashes file it is made on from. */
    digests: readonly Hash[] = [],
  ) {
    this.made = new CrnIndexMaker(context.hashes, context.groupSize ?? CRN_GROUP_RECORDS, digests);
  }

  /** Opens the index of the archive that holds `held` (its checkpoint's size and root; none yet: size 0). */
  static async open(
    context: CrnIndexContext,
    held: { readonly size: number; readonly root?: Hash },
  ): Promise<CrnIndexWriter> {
    const groupSize = checkedGroupSize(context.groupSize ?? CRN_GROUP_RECORDS);
    if (held.root === undefined) return new CrnIndexWriter(context, undefined, false);
    const tree = { origin: context.signer.name, size: held.size, root: held.root };
    const digests = await wholeIndex(context, tree, groupSize);
    // No index, or not a whole one: made again from the first bundle.
    if (digests === undefined) return new CrnIndexWriter(context, tree, false);
    // On from its whole groups.
    return new CrnIndexWriter(context, tree, true, digests.slice(0, Math.floor(held.size / groupSize)));
  }

  /** Bundle `index`, just archived: its records' crns, in seq order. */
  async bundle(index: number, crns: readonly (string | null)[]): Promise<void> {
    await this.catchUp(index);
    const group = this.made.take(index, crns);
    if (this.made.isWhole(group)) await this.writeGroup(group);
  }

  /**
   * Writes what is left of the index of the archive's tree `size` with root `root` (the run's
   * records all taken): the last group's files, if it is partial, and the note that signs them.
   */
  async seal(size: number, root: Hash | undefined): Promise<void> {
    if (root === undefined || size === 0) return;
    if (this.sealed && this.held?.size === size) return;
    await this.catchUp(size / TILE_WIDTH);
    const { groupSize } = this.made;
    const rest = (size % groupSize) / TILE_WIDTH;
    const last =
      rest > 0 ? await this.writeGroup(crnGroup(Math.floor(size / groupSize), rest, groupSize)) : undefined;
    const { tiles, keys, signer } = this.context;
    const text = this.made.noteText({ origin: signer.name, size, root }, last);
    const path = crnNotePath(size);
    const there = await tiles.read(path);
    if (there !== undefined) {
      // Signed before (perhaps by a key since rotated): kept when it is the note of this index.
      const opened = openNote(
        new TextDecoder('utf-8', { ignoreBOM: true }).decode(there),
        keys,
        verifyWith(keys),
      );
      if (opened.ok && opened.text === text) return;
      throw new AuditArchiveError(
        `${path} is already in ${tiles.location} and is not the note of the crn index this run makes (${opened.ok ? 'it signs another' : opened.reason}): an archive file is never rewritten; run case-read audit verify --archive`,
      );
    }
    if (await this.context.put(path, new TextEncoder().encode(signNote(text, signer)))) this.written++;
  }

  /** `group`'s files, of the bundles taken so far, written: the SHA-256 of its hashes file. */
  private async writeGroup(group: CrnGroup): Promise<Hash> {
    const made = this.made.files(group);
    for (const [i, bytes] of made.files.entries()) {
      if (await this.context.put(made.paths[i] as string, bytes)) this.written++;
    }
    return made.digest;
  }

  /**
   * Takes the archive's bundles from the last one taken up to bundle `to` (excluded), read back
   * from the archive: each checked against the stored tree's hash of its 256 leaves (which the
   * store keeps after letting go of the records), its entries read as the records they are.
   */
  private async catchUp(to: number): Promise<void> {
    const { hashes, log, tiles, stillHolding } = this.context;
    if (to < this.made.bundles) throw new AuditArchiveError(`bundle ${to} was given to the crn index twice`);
    while (this.made.bundles < to) {
      const from = this.made.bundles;
      const upTo = Math.min(to, from + BUNDLES_PER_LOCK_CHECK);
      const indexes = Array.from({ length: upTo - from }, (_, i) =>
        storedIndexOf({ level: TILE_HEIGHT, index: from + i }),
      );
      const stored = await log.treeHashes(indexes);
      for (const at of indexes) {
        const index = this.made.bundles;
        const path = bundlePath(index);
        const bytes = await tiles.read(path);
        if (bytes === undefined) {
          throw new AuditArchiveError(
            `${path} is missing from ${tiles.location}: the crn index is made of the archive's bundles; run case-read audit verify --archive`,
          );
        }
        const entries = entriesOf(bytes);
        const leaves = entries?.length === TILE_WIDTH ? entries.map((e) => leafHash(hashes.sha256, e)) : [];
        if (
          entries === undefined ||
          leaves.length !== TILE_WIDTH ||
          !sameHash(tileRoot(hashes.sha256, leaves), stored.get(at) as Hash)
        ) {
          throw new AuditArchiveError(
            `${path} is not what the stored tree holds of records ${index * TILE_WIDTH + 1}..${(index + 1) * TILE_WIDTH}: it was changed; run case-read audit verify --archive`,
          );
        }
        const crns = crnsOfEntries(entries, index * TILE_WIDTH + 1);
        if ('notRecord' in crns)
          throw new AuditArchiveError(
            `${path}: entry ${crns.notRecord} is not audit record ${index * TILE_WIDTH + crns.notRecord + 1}`,
          );
        await this.bundle(index, crns);
      }
      await stillHolding();
    }
  }
}
