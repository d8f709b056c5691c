/**
 * Bytes set aside off the heap for a while (decisions §23): a subject access answer's proof
 * hashes, made and checked once in its first pass, sent from here in its second, so memory
 * stays bounded whatever the subject's size and the tree's hashes are not made twice. Written
 * once, in order; read back once, from the start; then given back. The adapter is a file no
 * other process can open (src/adapters/spill-file).
 */
export interface Spill {
  /** Appends `bytes` after what was written. */
  append(bytes: Uint8Array): Promise<void>;
  /**
   * Everything appended, from the start, in pieces of at most `size` bytes; each piece may be
   * the same buffer, valid until the next is asked for.
   */
  pieces(size: number): AsyncIterable<Uint8Array>;
  /** Gives the space back; reading after it fails. Safe to call more than once. */
  close(): Promise<void>;
}

/** A new, empty spill. */
export type OpenSpill = () => Promise<Spill>;
