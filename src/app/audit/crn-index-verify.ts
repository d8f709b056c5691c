/**
 * `audit verify --archive`'s check of the archive's crn index (crn-index.ts): which files below
 * `crn-index/` are the archive's, and whether each holds what the entries make, the index made
 * again group by group (one in memory at a time) as the verifier walks the bundles.
 */
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { Hash } from '../../tlog/merkle.js';
import { type NoteVerifier, noteTextOf, openNote, verifyWith } from '../../tlog/note.js';
import { bundlePath, TILE_WIDTH } from '../../tlog/tiles.js';
import {
  CRN_GROUP_RECORDS,
  CRN_INDEX_DIR,
  CRN_SHARDS,
  type CrnGroup,
  crnGroup,
  crnGroupPaths,
  crnIndexPaths,
  crnNotePath,
  crnsOfEntries,
  type IndexedTree,
} from './crn-index.js';
import { CrnIndexMaker } from './crn-index-make.js';

/** What the check found wrong: why, and the files named. */
export interface CrnIndexProblem {
  readonly reason: string;
  readonly files: readonly string[];
}

/** What a missing file of the index asks for. */
export const MISSING_INDEX = "the archive's crn index: the next case-read audit archive writes it";

const NOTE_PATH = new RegExp(`^${CRN_INDEX_DIR}/signed/(0|[1-9][0-9]{0,15})$`);
const GROUP_PATH = new RegExp(
  `^${CRN_INDEX_DIR}/((?:x\\d{3}/)*\\d{3})(?:\\.p/(\\d{1,3}))?/([0-9a-f]|hashes)$`,
);
/** Files named in a message, at most. */
const NAMED = 100;

/**
 * The check of one archive's crn index, of the tree `tree` (its checkpoint's): {@link judge}
 * each file below `crn-index/` as the verifier lists them, then {@link bundle} each bundle's
 * entries in order, then {@link finish}. Besides the index of the archive's size, the files an
 * earlier archive wrote of a smaller size stay (its last group's, its note): they are checked
 * when present, as an earlier archive's narrower partial tiles are.
 */
export class CrnIndexCheck {
  /** The index as the entries make it. */
  private readonly made: CrnIndexMaker;
  /** An earlier archive's last groups present, by group: their sizes in bundles. */
  private readonly earlierGroups = new Map<number, Set<number>>();
  /** An earlier archive's notes present, by the size each signs. */
  private readonly earlierNotes = new Set<number>();
  private readonly changed: string[] = [];
  private changedCount = 0;
  private readonly notes: CrnIndexProblem[] = [];
  private broken: CrnIndexProblem | undefined;

  constructor(
    hashes: AuditHashes,
    private readonly tiles: ArchiveTiles,
    private readonly keys: readonly NoteVerifier[],
    private readonly tree: IndexedTree,
    groupSize: number = CRN_GROUP_RECORDS,
  ) {
    this.made = new CrnIndexMaker(hashes, groupSize);
  }

  /**
   * What the file at `path` is to the index, by its name alone: one of the index of the
   * archive's size (`current`), one an earlier archive wrote (`earlier`, kept to be checked),
   * or none of its files (`added`); undefined when the path is not below `crn-index/`.
   */
  judge(path: string): 'current' | 'earlier' | 'added' | undefined {
    if (!path.startsWith(`${CRN_INDEX_DIR}/`)) return undefined;
    const size = this.tree.size;
    const { groupSize, groupBundles } = this.made;
    const note = NOTE_PATH.exec(path);
    if (note) {
      const signs = Number(note[1]);
      if (signs === size) return 'current';
      if (signs === 0 || signs > size || signs % TILE_WIDTH !== 0) return 'added';
      this.earlierNotes.add(signs);
      return 'earlier';
    }
    const file = GROUP_PATH.exec(path);
    if (!file) return 'added';
    const group = Number((file[1] as string).replaceAll('x', '').replaceAll('/', ''));
    const bundles = file[2] === undefined ? groupBundles : Number(file[2]);
    if (bundles < 1 || bundles > groupBundles || !Number.isSafeInteger(group)) return 'added';
    if (!crnGroupPaths(crnGroup(group, bundles, groupSize)).includes(path)) return 'added';
    const end = group * groupSize + bundles * TILE_WIDTH;
    if (end > size) return 'added';
    if (bundles === groupBundles || end === size) return 'current';
    this.earlierGroups.set(group, (this.earlierGroups.get(group) ?? new Set()).add(bundles));
    return 'earlier';
  }

  /** The files of the index of the archive's size, in order: each group's, then the note. */
  *expectedPaths(): Generator<string> {
    yield* crnIndexPaths(this.tree.size, this.made.groupSize);
  }

  /** How many files {@link expectedPaths} gives. */
  get expectedCount(): number {
    return Math.ceil(this.tree.size / this.made.groupSize) * (CRN_SHARDS + 1) + 1;
  }

  /**
   * Bundle `index`'s entries (the next, in order), once read; `root` gives the root of the tree
   * of the bundles so far (an earlier archive's note signs its tree's).
   */
  async bundle(index: number, entries: readonly Uint8Array[], root: () => Hash): Promise<void> {
    if (this.broken !== undefined) return;
    const crns = crnsOfEntries(entries, index * TILE_WIDTH + 1, true);
    if ('notRecord' in crns) {
      this.broken = {
        reason: `${bundlePath(index)}: entry ${crns.notRecord} is not audit record ${index * TILE_WIDTH + crns.notRecord + 1}: the crn index cannot be made of it`,
        files: [bundlePath(index)],
      };
      return;
    }
    const group = this.made.take(index, crns);
    const whole = this.made.isWhole(group);
    let digest: Hash | undefined;
    if (whole || this.earlierGroups.get(group.group)?.has(group.bundles))
      digest = await this.compare(group, whole);
    const size = this.made.bundles * TILE_WIDTH;
    if (!this.earlierNotes.has(size)) return;
    // A whole group's digest is among the note's already; a partial one's is its last.
    const last = whole ? undefined : (digest ?? this.made.files(group).digest);
    await this.checkNote({ ...this.tree, size, root: root() }, last, false);
  }

  /** Once every bundle was given: the last group and the note of the archive's size; what is wrong, if anything. */
  async finish(): Promise<CrnIndexProblem | undefined> {
    if (this.broken !== undefined) return this.broken;
    const { groupSize } = this.made;
    const rest = (this.tree.size % groupSize) / TILE_WIDTH;
    const group = Math.floor(this.tree.size / groupSize);
    const last = rest > 0 ? await this.compare(crnGroup(group, rest, groupSize), true) : undefined;
    await this.checkNote(this.tree, last, true);
    if (this.changedCount > 0) {
      const more = this.changedCount - this.changed.length;
      return {
        reason: `crn index files that do not hold what the entries make: ${this.changed.join(', ')}${more > 0 ? ` and ${more} more` : ''} changed`,
        files: this.changed,
      };
    }
    const note = this.notes[0];
    return note === undefined
      ? undefined
      : { reason: this.notes.map((n) => n.reason).join('; '), files: this.notes.flatMap((n) => n.files) };
  }

  /**
   * Compares the files of `group` with those the records taken so far make, naming each that
   * differs (or, `required`, is missing): the SHA-256 of its hashes file as the entries make it.
   */
  private async compare(group: CrnGroup, required: boolean): Promise<Hash> {
    const made = this.made.files(group);
    for (const [i, path] of made.paths.entries()) {
      const there = await this.tiles.read(path);
      if (there === undefined ? required : !Buffer.from(there).equals(made.files[i] as Uint8Array))
        this.change(path);
    }
    return made.digest;
  }

  private change(path: string): void {
    this.changedCount++;
    if (this.changed.length < NAMED) this.changed.push(path);
  }

  /**
   * The note of `tree`, against the text the entries make (`last`: the SHA-256 of its partial
   * group's hashes file, if any). The archive's own must be signed by a key given; an earlier
   * archive's may be signed by a key since rotated (none given), but not badly.
   */
  private async checkNote(tree: IndexedTree, last: Hash | undefined, own: boolean): Promise<void> {
    const path = crnNotePath(tree.size);
    const bytes = await this.tiles.read(path);
    if (bytes === undefined) {
      if (own) this.notes.push({ reason: `${path} is missing (${MISSING_INDEX})`, files: [path] });
      return;
    }
    const note = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    const opened = openNote(note, this.keys, verifyWith(this.keys));
    // Written before a break of the trail (ADR 30), an earlier note names the log the trail was
    // then, signed by that log's key (given): the same tree, under that log's name.
    const named = note.split('\n', 2)[1];
    const before =
      opened.ok &&
      named !== undefined &&
      named !== tree.origin &&
      opened.verifiedBy.some((k) => k.startsWith(`${named}+`));
    const text = this.made.noteText(before ? { ...tree, origin: named } : tree, last);
    const signedBefore = !own && !opened.ok && opened.why === 'no-key';
    if (!opened.ok && !signedBefore) {
      this.notes.push({ reason: `${path}: ${opened.reason}`, files: [path] });
    } else if ((opened.ok ? opened.text : noteTextOf(note)) !== text) {
      this.notes.push({
        reason: `${path} does not sign the crn index the entries make of ${tree.size} records: it was changed`,
        files: [path],
      });
    }
  }
}
