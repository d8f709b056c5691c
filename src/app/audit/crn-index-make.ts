/**
 * The crn index (crn-index.ts) made of the archived records, bundle by bundle in seq order, as
 * `audit archive` writes it (crn-index-write.ts) and as `audit verify --archive` makes it again
 * to compare with the files there (crn-index-verify.ts): one group's crns in memory at a time,
 * each group's files and their digest, and the text the index note signs.
 */
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { Hash, Sha256 } from '../../tlog/merkle.js';
import { concat, toBase64 } from '../../tlog/note.js';
import { TILE_WIDTH } from '../../tlog/tiles.js';
import {
  CRN_GROUP_RECORDS,
  CRN_INDEX_HEADER,
  CRN_SHARDS,
  type CrnGroup,
  checkedGroupSize,
  crnGroup,
  crnGroupPaths,
  crnIndexDigest,
  crnShardOf,
  type IndexedTree,
} from './crn-index.js';

const encoder = new TextEncoder();

/** One group's crns as they are gathered, record by record in seq order; then its files. */
class CrnGroupIndex {
  private readonly byCrn = new Map<string, number[]>();

  /** Record `seq` names `crn` (a record naming none is not indexed). */
  add(seq: number, crn: string | null): void {
    if (crn === null) return;
    const seqs = this.byCrn.get(crn);
    if (seqs === undefined) this.byCrn.set(crn, [seq]);
    else seqs.push(seq);
  }

  /** Its 16 shard files, in shard order. */
  shards(sha256Hex: (text: string) => string): Uint8Array[] {
    const lines: string[][] = Array.from({ length: CRN_SHARDS }, () => []);
    // By UTF-16 code units, as `<` compares (the default order of sort).
    const crns = [...this.byCrn.keys()].sort();
    for (const crn of crns) {
      (lines[crnShardOf(sha256Hex, crn)] as string[]).push(`${JSON.stringify([crn, this.byCrn.get(crn)])}\n`);
    }
    return lines.map((shard) => encoder.encode(shard.join('')));
  }
}

/** A group's hashes file: the SHA-256 of each of its shard files, in shard order. */
const crnHashesFileOf = (sha256: Sha256, shards: readonly Uint8Array[]): Uint8Array =>
  concat(...shards.map((shard) => sha256(shard)));

/** A group's files as the records taken make them, in the order of their paths, and what the note signs of them. */
export interface CrnGroupFiles {
  readonly paths: readonly string[];
  readonly files: readonly Uint8Array[];
  /** The SHA-256 of its hashes file. */
  readonly digest: Hash;
}

/**
 * The index being made: {@link take} each bundle's crns in order, {@link files} of a group once
 * its bundles are taken (a whole group's digest is then kept for the note, and its crns let go
 * of), and {@link noteText} of the tree.
 */
export class CrnIndexMaker {
  /** Records a group covers (65536; tests make it small), and its bundles. */
  readonly groupSize: number;
  readonly groupBundles: number;
  private current = new CrnGroupIndex();
  /** The digest of each whole group's hashes file, in order. */
  private readonly digests: Hash[];
  private taken: number;

  /** Made on from the whole groups whose `digests` are given (none: from the first bundle). */
  constructor(
    private readonly hashes: AuditHashes,
    groupSize: number = CRN_GROUP_RECORDS,
    digests: readonly Hash[] = [],
  ) {
    this.groupSize = checkedGroupSize(groupSize);
    this.groupBundles = this.groupSize / TILE_WIDTH;
    this.digests = [...digests];
    this.taken = this.digests.length * this.groupBundles;
  }

  /** The bundles taken (those of the groups given included). */
  get bundles(): number {
    return this.taken;
  }

  /** Bundle `index`'s crns, the next bundle's, in seq order: the group it is in, of the bundles taken (whole once it completes it). */
  take(index: number, crns: readonly (string | null)[]): CrnGroup {
    crns.forEach((crn, i) => {
      this.current.add(index * TILE_WIDTH + i + 1, crn);
    });
    this.taken++;
    const group = Math.floor((this.taken - 1) / this.groupBundles);
    return crnGroup(group, this.taken - group * this.groupBundles, this.groupSize);
  }

  /** Whether `group` holds all of a group's bundles. */
  isWhole(group: CrnGroup): boolean {
    return group.bundles === this.groupBundles;
  }

  /** The files of `group`, the group of the records taken last; a whole one's digest is kept for the note. */
  files(group: CrnGroup): CrnGroupFiles {
    const sha256 = this.hashes.sha256;
    const shards = this.current.shards(this.hashes.sha256Hex);
    const hashesFile = crnHashesFileOf(sha256, shards);
    const digest = sha256(hashesFile);
    if (this.isWhole(group)) {
      this.digests.push(digest);
      this.current = new CrnGroupIndex();
    }
    return { paths: crnGroupPaths(group), files: [...shards, hashesFile], digest };
  }

  /** The text the index note of `tree` signs: the whole groups' digests, then `last`, its partial last group's, if any. */
  noteText(tree: IndexedTree, last?: Hash): string {
    const digests = last === undefined ? this.digests : [...this.digests, last];
    const digest = crnIndexDigest(this.hashes.sha256, digests);
    return `${CRN_INDEX_HEADER}\n${tree.origin}\n${tree.size}\n${toBase64(tree.root)}\n${toBase64(digest)}\n`;
  }
}
