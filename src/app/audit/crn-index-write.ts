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
  CrnGroupIndex,
  checkedGroupSize,
  crnGroup,
  crnGroupPaths,
  crnGroupsOf,
  crnHashesFileOf,
  crnIndexDigest,
  crnIndexNoteText,
  crnNotePath,
  crnsOfEntries,
  type IndexedTree,
  signedGroupDigests,
} from './crn-index.js';

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
  for (const group of crnGroupsOf(tree.size, groupSize)) {
    for (const path of crnGroupPaths(group)) if (!(await context.tiles.has(path))) return undefined;
  }
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
  private readonly groupSize: number;
  /** The SHA-256 of each whole group's hashes file so far, in order. */
  private readonly digests: Hash[] = [];
  private current = new CrnGroupIndex();
  /** Bundles the index has taken (each one below). */
  private bundles: number;

  private constructor(
    private readonly context: CrnIndexContext,
    private readonly held: IndexedTree | undefined,
    /** Whether the note of the held size was found whole: the index of that size is written. */
    private readonly sealed: boolean,
    from: number,
  ) {
    this.groupSize = checkedGroupSize(context.groupSize ?? CRN_GROUP_RECORDS);
    this.bundles = from / TILE_WIDTH;
  }

  /** Opens the index of the archive that holds `held` (its checkpoint's size and root; none yet: size 0). */
  static async open(
    context: CrnIndexContext,
    held: { readonly size: number; readonly root?: Hash },
  ): Promise<CrnIndexWriter> {
    const groupSize = checkedGroupSize(context.groupSize ?? CRN_GROUP_RECORDS);
    if (held.root === undefined) return new CrnIndexWriter(context, undefined, false, 0);
    const tree = { origin: context.signer.name, size: held.size, root: held.root };
    const digests = await wholeIndex(context, tree, groupSize);
    // No index, or not a whole one: made again from the first bundle.
    if (digests === undefined) return new CrnIndexWriter(context, tree, false, 0);
    const full = Math.floor(held.size / groupSize);
    const writer = new CrnIndexWriter(context, tree, true, full * groupSize);
    for (const digest of digests.slice(0, full)) writer.digests.push(digest);
    return writer;
  }

  /** Bundle `index`, just archived: its records' crns, in seq order. */
  async bundle(index: number, crns: readonly (string | null)[]): Promise<void> {
    await this.catchUp(index);
    crns.forEach((crn, i) => {
      this.current.add(index * TILE_WIDTH + i + 1, crn);
    });
    this.bundles++;
    const groupBundles = this.groupSize / TILE_WIDTH;
    if (this.bundles % groupBundles === 0)
      this.digests.push(await this.writeGroup(this.bundles / groupBundles - 1, groupBundles));
  }

  /**
   * Writes what is left of the index of the archive's tree `size` with root `root` (the run's
   * records all taken): the last group's files, if it is partial, and the note that signs them.
   */
  async seal(size: number, root: Hash | undefined): Promise<void> {
    if (root === undefined || size === 0) return;
    if (this.sealed && this.held?.size === size) return;
    await this.catchUp(size / TILE_WIDTH);
    const rest = (size % this.groupSize) / TILE_WIDTH;
    const digests =
      rest > 0
        ? [...this.digests, await this.writeGroup(Math.floor(size / this.groupSize), rest)]
        : this.digests;
    const { hashes, tiles, keys, signer } = this.context;
    const text = crnIndexNoteText(
      { origin: signer.name, size, root },
      crnIndexDigest(hashes.sha256, digests),
    );
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

  /** Group `group`'s files, of `bundles` bundles (the records taken so far): the SHA-256 of its hashes file. */
  private async writeGroup(group: number, bundles: number): Promise<Hash> {
    const sha256 = this.context.hashes.sha256;
    const shards = this.current.shards(this.context.hashes.sha256Hex);
    const hashesFile = crnHashesFileOf(sha256, shards);
    const paths = crnGroupPaths(crnGroup(group, bundles, this.groupSize));
    for (const [i, bytes] of [...shards, hashesFile].entries()) {
      if (await this.context.put(paths[i] as string, bytes)) this.written++;
    }
    if (bundles === this.groupSize / TILE_WIDTH) this.current = new CrnGroupIndex();
    return sha256(hashesFile);
  }

  /**
   * Takes the archive's bundles from the last one taken up to bundle `to` (excluded), read back
   * from the archive: each checked against the stored tree's hash of its 256 leaves (which the
   * store keeps after letting go of the records), its entries read as the records they are.
   */
  private async catchUp(to: number): Promise<void> {
    const { hashes, log, tiles, stillHolding } = this.context;
    if (to < this.bundles) throw new AuditArchiveError(`bundle ${to} was given to the crn index twice`);
    while (this.bundles < to) {
      const upTo = Math.min(to, this.bundles + BUNDLES_PER_LOCK_CHECK);
      const indexes = Array.from({ length: upTo - this.bundles }, (_, i) =>
        storedIndexOf({ level: TILE_HEIGHT, index: this.bundles + i }),
      );
      const stored = await log.treeHashes(indexes);
      for (const at of indexes) {
        const index = this.bundles;
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
