/**
 * `audit archive`, `audit verify --archive`, `audit prove --archive`, `audit query --archive`:
 * the trail's archive as a directory on a disk (node:fs; decisions §15). The commands import it
 * from here, never from src/adapters; the application's archive work sees only the port.
 */
import { TileDirectory } from '../../adapters/tile-directory/tile-directory.js';
import type { ArchiveTiles } from '../../ports/archive-tiles.js';
import type { NoteVerifier } from '../../tlog/note.js';
import { ArchiveReader } from '../audit/archive-reader.js';
import { auditHashes } from './audit-keys.js';

/** The archive in the directory `dir` (as given: messages name it so). */
export const archiveDirectory = (dir: string): ArchiveTiles => new TileDirectory(dir);

/** The archive in `dir` opened to be read and proved from, its checkpoint checked with `keys`. */
export const openArchive = (dir: string, keys: readonly NoteVerifier[]): Promise<ArchiveReader> =>
  ArchiveReader.open(auditHashes, archiveDirectory(dir), keys);
