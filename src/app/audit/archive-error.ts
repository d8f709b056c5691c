/**
 * The error of an archive of the trail (decisions §15) that cannot be written or read as asked,
 * in a file of its own so that the archive's crn index (crn-index*.ts), which archive.ts calls,
 * throws the same error without importing archive.ts back. archive.ts re-exports it.
 */

/** An archive that cannot be written or read as asked; the message names the file or the record. */
export class AuditArchiveError extends Error {
  override readonly name = 'AuditArchiveError';
}
