import { auditRecordOfEntry } from '../../domain/audit/canonical-text.js';
import { type AuditQuery, matchesAuditQuery, type StoredAuditRecord } from '../../domain/audit/record.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import { type Hash, leafHash, nodeHash, type Subtree, sameHash } from '../../tlog/merkle.js';
import type { CheckpointBody, NoteVerifier } from '../../tlog/note.js';
import { type HashSource, proveFrom, rootFrom, storedSubtreeOf } from '../../tlog/proofs.js';
import { bundlePath, entriesOf, hashesAtLevel, TILE_HEIGHT, TILE_WIDTH, tilePath } from '../../tlog/tiles.js';
import { AuditArchiveError, CHECKPOINT_FILE } from './archive.js';
import { AuditProofError, openCheckpoint } from './proving.js';

const HASH_BYTES = 32;

/** What the file system said when a file could not be read (ENOENT when there was none). */
const codeOf = (error: unknown): string | undefined => (error as { code?: string }).code;

/**
 * Reads an archive of the trail (decisions §15) for `audit query --archive` and `audit prove
 * --archive`: its checkpoint opened with the keys given, records read back from the entry
 * bundles (each entry must be a record this service wrote, to the byte), and the tree's
 * hashes from the hash tiles, the source the one proof builder (src/tlog/proofs.ts) makes the
 * archive's proofs of. Every proof it gives is checked against the archive's signed root
 * first. (`audit verify --archive` checks the whole archive; this reads only what it needs.)
 */
export class ArchiveReader {
  private readonly files = new Map<string, Uint8Array>();
  /** The last bundle read, by index, its entries split out: the records of one crn are often neighbours. */
  private lastBundle: { index: number; entries: Uint8Array[] } | undefined;
  /** The level-0 tile kept in {@link files}: only the last one read. */
  private lastLeafTile: string | undefined;
  /** Where bundles are read by {@link entryAt}: one buffer, used again for each. */
  private readonly bundleScratch = { bytes: new Uint8Array(0) };
  /** Where level-0 tiles are read by {@link read}: one buffer, the last tile's. */
  private readonly leafTileScratch = { bytes: new Uint8Array(0) };
  /** The subtrees of the last tile made at each tile level (by the level's path part), see {@link treeOf}. */
  private readonly trees = new Map<string, { readonly path: string; readonly levels: Uint8Array[] }>();

  /** The archived tree's hashes, read from its hash tiles (Go's tlog.TileHashReader); each is inside the archived tree. */
  readonly tileHashes: HashSource = {
    hashes: async (indexes) => {
      const found = new Map<number, Hash>();
      for (const index of indexes) found.set(index, await this.subtreeHash(storedSubtreeOf(index)));
      return found;
    },
  };

  private constructor(
    private readonly hashes: AuditHashes,
    private readonly tiles: ArchiveTiles,
    readonly checkpoint: CheckpointBody,
    readonly note: string,
  ) {}

  /** Opens the archive `tiles`: its checkpoint must be signed by one of `keys`. */
  static async open(
    hashes: AuditHashes,
    tiles: ArchiveTiles,
    keys: readonly NoteVerifier[],
  ): Promise<ArchiveReader> {
    let bytes: Uint8Array | undefined;
    try {
      bytes = await tiles.read(CHECKPOINT_FILE);
    } catch (error) {
      throw ArchiveReader.unreadable(tiles, codeOf(error));
    }
    if (bytes === undefined) throw ArchiveReader.unreadable(tiles, 'ENOENT');
    const note = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    const { body } = openCheckpoint(note, keys, tiles.locationOf(CHECKPOINT_FILE));
    return new ArchiveReader(hashes, tiles, body, note);
  }

  private static unreadable(tiles: ArchiveTiles, code: string | undefined): AuditArchiveError {
    return new AuditArchiveError(
      `${tiles.location} is not an archive of the trail: its ${CHECKPOINT_FILE} cannot be read (${code})`,
    );
  }

  get size(): number {
    return this.checkpoint.size;
  }

  private async read(path: string): Promise<Uint8Array> {
    const held = this.files.get(path);
    if (held !== undefined) return held;
    const leafTile = path.startsWith('tile/0/');
    let bytes: Uint8Array | undefined;
    let code: string | undefined = 'ENOENT';
    try {
      // A level-0 tile into the one scratch buffer kept for them, where the store can: only the
      // last is kept, and a batch of proofs reads tens of thousands.
      bytes =
        leafTile && this.tiles.readInto !== undefined
          ? await this.tiles.readInto(path, this.leafTileScratch)
          : await this.tiles.read(path);
    } catch (error) {
      code = codeOf(error);
    }
    if (bytes === undefined) {
      throw new AuditArchiveError(
        `${path} is missing from ${this.tiles.location} (${code}); run case-read audit verify --archive`,
      );
    }
    // Only a proof's few tiles are kept; bundles are read once each, and of the level-0 tiles
    // (one for each bundle: a crn's records may touch thousands) only the last.
    if (path.startsWith('tile/entries/')) return bytes;
    if (leafTile) {
      if (this.lastLeafTile !== undefined) this.files.delete(this.lastLeafTile);
      this.lastLeafTile = path;
    }
    this.files.set(path, bytes);
    return bytes;
  }

  /** A bundle's bytes, read into {@link bundleScratch} where the archive's store can (refused as {@link read} refuses a file). */
  private async readBundle(path: string): Promise<Uint8Array> {
    if (this.tiles.readInto === undefined) return this.read(path);
    let bytes: Uint8Array | undefined;
    let code: string | undefined = 'ENOENT';
    try {
      bytes = await this.tiles.readInto(path, this.bundleScratch);
    } catch (error) {
      code = codeOf(error);
    }
    if (bytes === undefined) {
      throw new AuditArchiveError(
        `${path} is missing from ${this.tiles.location} (${code}); run case-read audit verify --archive`,
      );
    }
    return bytes;
  }

  /**
   * Record `seq` and its entry, read back from its bundle (checked against the level-0 tile,
   * as {@link bundle} does); a proof of it is the caller's.
   */
  async entryAt(seq: number): Promise<{ record: StoredAuditRecord; entry: Uint8Array }> {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.size) {
      throw new AuditProofError(`the archive holds records 1..${this.size}, not ${seq}`);
    }
    const index = Math.floor((seq - 1) / TILE_WIDTH);
    const path = bundlePath(index);
    if (this.lastBundle?.index !== index) {
      // Read into the one scratch buffer this reader keeps for bundles: its entries are views
      // of it until the next bundle is read, and the entry handed out is a copy.
      const entries = entriesOf(await this.readBundle(path));
      if (entries === undefined || entries.length !== TILE_WIDTH) {
        throw new AuditArchiveError(`${path} does not hold ${TILE_WIDTH} whole entries: it was changed`);
      }
      this.lastBundle = { index, entries };
    }
    // This entry alone: checked against its hash in the level-0 tile, and read back as a record.
    const i = (seq - 1) % TILE_WIDTH;
    const entry = (this.lastBundle.entries[i] as Uint8Array).slice();
    const leafTile = tilePath({ level: 0, index, width: TILE_WIDTH });
    const tile = await this.read(leafTile);
    if (!sameHash(leafHash(this.hashes.sha256, entry), tile.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES))) {
      throw new AuditArchiveError(
        `${path}: entry ${i} is not the leaf ${leafTile} holds: one of them was changed`,
      );
    }
    const record = auditRecordOfEntry(new TextDecoder().decode(entry), this.hashes.sha256Hex);
    if (record?.seq !== seq)
      throw new AuditArchiveError(`${path}: entry ${i} is not audit record ${seq}: it was changed`);
    return { record, entry };
  }

  /** The records of bundle `index`, each read back from its entry; an entry that is not a record is refused, naming the file. */
  private async bundle(index: number): Promise<{ record: StoredAuditRecord; entry: Uint8Array }[]> {
    const path = bundlePath(index);
    const entries = entriesOf(await this.read(path));
    if (entries === undefined || entries.length !== TILE_WIDTH) {
      throw new AuditArchiveError(`${path} does not hold ${TILE_WIDTH} whole entries: it was changed`);
    }
    // Each entry against its hash in the level-0 tile (the tiles against the signed root is
    // `audit verify --archive`'s whole walk; a proof checks its own path to the root).
    const tile = await this.read(tilePath({ level: 0, index, width: TILE_WIDTH }));
    entries.forEach((entry, i) => {
      if (
        !sameHash(leafHash(this.hashes.sha256, entry), tile.subarray(i * HASH_BYTES, (i + 1) * HASH_BYTES))
      ) {
        throw new AuditArchiveError(
          `${path}: entry ${i} is not the leaf ${tilePath({ level: 0, index, width: TILE_WIDTH })} holds: one of them was changed`,
        );
      }
    });
    return entries.map((entry, i) => {
      const seq = index * TILE_WIDTH + i + 1;
      const record = auditRecordOfEntry(new TextDecoder().decode(entry), this.hashes.sha256Hex);
      if (record?.seq !== seq)
        throw new AuditArchiveError(`${path}: entry ${i} is not audit record ${seq}: it was changed`);
      return { record, entry };
    });
  }

  /** The archived records that match `filter`, oldest first, at most its limit (1000 by default). */
  async query(filter: AuditQuery): Promise<StoredAuditRecord[]> {
    const limit = filter.limit ?? 1000;
    const found: StoredAuditRecord[] = [];
    for (let index = 0; index * TILE_WIDTH < this.size && found.length < limit; index++) {
      for (const { record } of await this.bundle(index)) {
        if (!matchesAuditQuery(record, filter)) continue;
        found.push(record);
        if (found.length >= limit) break;
      }
    }
    return found;
  }

  /** The hash of a whole subtree inside the archived tree, from the hash tile that holds it (or the hashes below it). */
  private async subtreeHash({ level, index }: Subtree): Promise<Hash> {
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
    const tile = await this.read(path);
    if (tile.length !== width * HASH_BYTES)
      throw new AuditArchiveError(`${path} is not ${width} hashes: it was changed`);
    const offset = first - tileIndex * TILE_WIDTH;
    const levels = below === 1 ? [tile] : this.treeOf(path, tile);
    const at = (offset / below) * HASH_BYTES;
    // A copy: the tile and its levels are buffers used again for the next tile.
    return (levels[level - tileLevel * TILE_HEIGHT] as Uint8Array).slice(at, at + HASH_BYTES);
  }

  /**
   * The subtrees a tile's hashes make, level by level (level 0 the tile itself), each level's
   * hashes end to end: made once for the last tile asked of at each tile level, since a batch
   * of proofs asks for many subtrees of the same tile, each made of up to 128 of its hashes.
   */
  private treeOf(path: string, tile: Uint8Array): Uint8Array[] {
    const tileLevel = path.split('/')[1] as string;
    const held = this.trees.get(tileLevel);
    if (held?.path === path) return held.levels;
    const { sha256 } = this.hashes;
    // The levels of the tile made before at this tile level are made again in place: the last
    // tile's alone is kept.
    const levels = [tile];
    let level = 1;
    for (let below = tile; below.length >= 2 * HASH_BYTES; level++) {
      const length = Math.floor(below.length / (2 * HASH_BYTES)) * HASH_BYTES;
      const before = held?.levels[level];
      const above = before?.length === length ? before : new Uint8Array(length);
      for (let i = 0; i < above.length; i += HASH_BYTES) {
        const left = below.subarray(2 * i, 2 * i + HASH_BYTES);
        above.set(nodeHash(sha256, left, below.subarray(2 * i + HASH_BYTES, 2 * i + 2 * HASH_BYTES)), i);
      }
      levels.push(above);
      below = above;
    }
    this.trees.set(tileLevel, { path, levels });
    return levels;
  }

  /**
   * The consistency proof from the tree of `oldSize` records to the archive's signed tree,
   * checked against the signed root (and the old tree's root as the tiles make it) before it
   * is given.
   */
  async proveConsistency(oldSize: number): Promise<Hash[]> {
    if (!Number.isSafeInteger(oldSize) || oldSize < 1 || oldSize > this.size) {
      throw new AuditProofError(
        `the archive's tree of ${this.size} records cannot be proven to extend one of ${oldSize}`,
      );
    }
    const proof = await proveFrom(this.hashes.sha256, this.tileHashes, {
      consistency: oldSize,
      size: this.size,
      roots: {
        old: await rootFrom(this.hashes.sha256, this.tileHashes, oldSize),
        new: this.checkpoint.root,
      },
    });
    if (proof === undefined) {
      throw new AuditProofError(
        "the archive's tiles do not make the root its checkpoint signs: a file was changed; run case-read audit verify --archive",
      );
    }
    return proof;
  }

  /**
   * Record `seq` and its inclusion proof in the archive's signed tree, checked against the
   * signed root before it is given.
   */
  async prove(seq: number): Promise<{ record: StoredAuditRecord; entry: Uint8Array; proof: Hash[] }> {
    if (!Number.isSafeInteger(seq) || seq < 1 || seq > this.size) {
      throw new AuditProofError(`the archive holds records 1..${this.size}, not ${seq}`);
    }
    const { record, entry } = (await this.bundle(Math.floor((seq - 1) / TILE_WIDTH)))[
      (seq - 1) % TILE_WIDTH
    ] as { record: StoredAuditRecord; entry: Uint8Array };
    const proof = await proveFrom(this.hashes.sha256, this.tileHashes, {
      inclusion: seq - 1,
      leaf: leafHash(this.hashes.sha256, entry),
      size: this.size,
      root: this.checkpoint.root,
    });
    if (proof === undefined) {
      throw new AuditProofError(
        `record ${seq} as archived is not the leaf the archive's checkpoint signed: a file was changed; run case-read audit verify --archive`,
      );
    }
    return { record, entry, proof };
  }
}
