import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditRecordOfEntry } from '../../domain/audit/canonical-text.js';
import { type AuditQuery, matchesAuditQuery, type StoredAuditRecord } from '../../domain/audit/record.js';
import {
  consistencyRanges,
  type Hash,
  inclusionRanges,
  type LeafRange,
  leafHash,
  rangeHashes,
  type Subtree,
  sameHash,
  storedIndexOf,
  subtreesOf,
  verifyInclusion,
} from '../../tlog/merkle.js';
import type { CheckpointBody, NoteVerifierKey } from '../../tlog/note.js';
import {
  bundlePath,
  entriesOf,
  hashesAtLevel,
  TILE_HEIGHT,
  TILE_WIDTH,
  tilePath,
  tileRoot,
} from '../../tlog/tiles.js';
import { sha256Bytes, sha256Hex } from '../composition/audit-keys.js';
import { AuditArchiveError, CHECKPOINT_FILE } from './archive.js';
import { AuditProofError, openCheckpoint } from './proving.js';

const HASH_BYTES = 32;

/**
 * Reads an archive of the trail (decisions §15) for `audit query --archive` and `audit prove
 * --archive`: its checkpoint opened with the keys given, records read back from the entry
 * bundles (each entry must be a record this service wrote, to the byte), and the tree's
 * hashes from the hash tiles. Every proof it gives is checked against the archive's signed
 * root first. (`audit verify --archive` checks the whole archive; this reads only what it needs.)
 */
export class ArchiveReader {
  private readonly files = new Map<string, Uint8Array>();

  private constructor(
    private readonly dir: string,
    readonly checkpoint: CheckpointBody,
    readonly note: string,
  ) {}

  /** Opens `dir`: its checkpoint must be signed by one of `keys`. */
  static open(dir: string, keys: readonly NoteVerifierKey[]): ArchiveReader {
    let note: string;
    try {
      note = readFileSync(join(dir, CHECKPOINT_FILE), 'utf8');
    } catch (error) {
      throw new AuditArchiveError(
        `${dir} is not an archive of the trail: its ${CHECKPOINT_FILE} cannot be read (${(error as NodeJS.ErrnoException).code})`,
      );
    }
    const { body } = openCheckpoint(note, keys, join(dir, CHECKPOINT_FILE));
    return new ArchiveReader(dir, body, note);
  }

  get size(): number {
    return this.checkpoint.size;
  }

  private read(path: string): Uint8Array {
    const held = this.files.get(path);
    if (held !== undefined) return held;
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(join(this.dir, path)));
    } catch (error) {
      throw new AuditArchiveError(
        `${path} is missing from ${this.dir} (${(error as NodeJS.ErrnoException).code}); run case-read audit verify --archive`,
      );
    }
    // Only a proof's few tiles are kept; bundles are read once each.
    if (path.startsWith('tile/entries/')) return bytes;
    this.files.set(path, bytes);
    return bytes;
  }

  /** The records of bundle `index`, each read back from its entry; an entry that is not a record is refused, naming the file. */
  private bundle(index: number): { record: StoredAuditRecord; entry: Uint8Array }[] {
    const path = bundlePath(index);
    const entries = entriesOf(this.read(path));
    if (entries === undefined || entries.length !== TILE_WIDTH) {
      throw new AuditArchiveError(`${path} does not hold ${TILE_WIDTH} whole entries: it was changed`);
    }
    // Each entry against its hash in the level-0 tile (the tiles against the signed root is
    // `audit verify --archive`'s whole walk; a proof checks its own path to the root).
    const tile = this.read(tilePath({ level: 0, index, width: TILE_WIDTH }));
    entries.forEach((entry, i) => {
      if (!sameHash(leafHash(sha256Bytes, entry), tile.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES))) {
        throw new AuditArchiveError(
          `${path}: entry ${i} is not the leaf ${tilePath({ level: 0, index, width: TILE_WIDTH })} holds: one of them was changed`,
        );
      }
    });
    return entries.map((entry, i) => {
      const seq = index * TILE_WIDTH + i + 1;
      const record = auditRecordOfEntry(new TextDecoder().decode(entry), sha256Hex);
      if (record?.seq !== seq)
        throw new AuditArchiveError(`${path}: entry ${i} is not audit record ${seq}: it was changed`);
      return { record, entry };
    });
  }

  /** The archived records that match `filter`, oldest first, at most its limit (1000 by default). */
  query(filter: AuditQuery): StoredAuditRecord[] {
    const limit = filter.limit ?? 1000;
    const found: StoredAuditRecord[] = [];
    for (let index = 0; index * TILE_WIDTH < this.size && found.length < limit; index++) {
      for (const { record } of this.bundle(index)) {
        if (!matchesAuditQuery(record, filter)) continue;
        found.push(record);
        if (found.length >= limit) break;
      }
    }
    return found;
  }

  /** The hash of a whole subtree inside the archived tree, from the hash tile that holds it (or the hashes below it). */
  private subtreeHash({ level, index }: Subtree): Hash {
    const tileLevel = Math.floor(level / TILE_HEIGHT);
    const below = 2 ** (level - tileLevel * TILE_HEIGHT);
    const first = index * below;
    const tileIndex = Math.floor(first / TILE_WIDTH);
    const width = Math.min(TILE_WIDTH, hashesAtLevel(this.size, tileLevel) - tileIndex * TILE_WIDTH);
    if (first + below > hashesAtLevel(this.size, tileLevel)) {
      throw new AuditProofError(
        `the archive's tree of ${this.size} records holds no subtree ${level}/${index}`,
      );
    }
    const path = tilePath({ level: tileLevel, index: tileIndex, width });
    const tile = this.read(path);
    if (tile.length !== width * HASH_BYTES)
      throw new AuditArchiveError(`${path} is not ${width} hashes: it was changed`);
    const at = (first - tileIndex * TILE_WIDTH) * HASH_BYTES;
    const hashes = Array.from({ length: below }, (_, i) =>
      tile.subarray(at + i * HASH_BYTES, at + (i + 1) * HASH_BYTES),
    );
    return tileRoot(sha256Bytes, hashes);
  }

  /** The hashes of `ranges` (each a root or a proof's), made of the tiles' hashes. */
  private rangeHashesOf(ranges: readonly LeafRange[]): Hash[] {
    const stored = new Map<number, Hash>();
    for (const range of ranges) {
      for (const piece of subtreesOf(range)) stored.set(storedIndexOf(piece), this.subtreeHash(piece));
    }
    return rangeHashes(sha256Bytes, ranges, stored);
  }

  /** The consistency proof from the tree of `oldSize` records to the archive's signed tree. */
  proveConsistency(oldSize: number): Hash[] {
    if (!Number.isSafeInteger(oldSize) || oldSize < 1 || oldSize > this.size) {
      throw new AuditProofError(
        `the archive's tree of ${this.size} records cannot be proven to extend one of ${oldSize}`,
      );
    }
    return this.rangeHashesOf(consistencyRanges(oldSize, this.size));
  }

  /**
   * Record `seq` and its inclusion proof in the archive's signed tree, checked against the
   * signed root before it is given.
   */
  prove(seq: number): { record: StoredAuditRecord; entry: Uint8Array; proof: Hash[] } {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.size) {
      throw new AuditProofError(`the archive holds records 1..${this.size}, not ${seq}`);
    }
    const { record, entry } = this.bundle(Math.floor((seq - 1) / TILE_WIDTH))[(seq - 1) % TILE_WIDTH] as {
      record: StoredAuditRecord;
      entry: Uint8Array;
    };
    const proof = this.rangeHashesOf(inclusionRanges(seq - 1, this.size));
    if (
      !verifyInclusion(
        sha256Bytes,
        seq - 1,
        this.size,
        leafHash(sha256Bytes, entry),
        proof,
        this.checkpoint.root,
      )
    ) {
      throw new AuditProofError(
        `record ${seq} as archived is not the leaf the archive's checkpoint signed: a file was changed; run case-read audit verify --archive`,
      );
    }
    return { record, entry, proof };
  }
}
