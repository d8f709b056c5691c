/**
 * C2SP tlog-proof@v1: an offline proof that one entry is in the log, the inclusion proof and
 * the signed checkpoint it proves against in one text file (`.tlog-proof`):
 *
 *     c2sp.org/tlog-proof@v1
 *     [extra BASE64]
 *     index N
 *     BASE64(hash)      one a line, from the leaf's sibling up to the root's child
 *
 *     CHECKPOINT NOTE   verbatim, with its signatures
 */
import type { Hash } from './merkle.js';
import { fromBase64, hashFromBase64, hashToBase64 } from './note.js';

const HEADER = 'c2sp.org/tlog-proof@v1';

/** A proof this side was asked to write that the format cannot carry. */
export class TlogProofError extends Error {
  override readonly name = 'TlogProofError';
}

export interface TlogProof {
  readonly index: number;
  readonly hashes: readonly Hash[];
  /** The signed checkpoint note, verbatim. */
  readonly checkpoint: string;
  /** Base64 of opaque data, unauthenticated, as the format says; never trusted. */
  readonly extra?: string;
}

/**
 * The proof as its file holds it; throws a TlogProofError for an `extra` that is not base64
 * (a newline in it would end its line, and the file would not read back).
 */
export function formatTlogProof(proof: TlogProof): string {
  const lines = [HEADER];
  if (proof.extra !== undefined) {
    if (fromBase64(proof.extra) === undefined) throw new TlogProofError('a tlog-proof extra is base64');
    lines.push(`extra ${proof.extra}`);
  }
  lines.push(`index ${proof.index}`, ...proof.hashes.map(hashToBase64));
  return `${lines.join('\n')}\n\n${proof.checkpoint}`;
}

/** A proof file read, or what is wrong with it (the line at fault named). */
export function parseTlogProof(text: string): TlogProof | { readonly invalid: string } {
  const blank = text.indexOf('\n\n');
  if (blank < 0) return { invalid: 'no empty line before the checkpoint' };
  const lines = text.slice(0, blank).split('\n');
  if (lines[0] !== HEADER) return { invalid: `its first line is not ${HEADER}` };
  let at = 1;
  let extra: string | undefined;
  if (lines[at]?.startsWith('extra ')) {
    extra = (lines[at] as string).slice('extra '.length);
    if (fromBase64(extra) === undefined) return { invalid: `line ${at + 1} is not "extra BASE64"` };
    at++;
  }
  const index = /^index (0|[1-9][0-9]{0,15})$/.exec(lines[at] ?? '');
  if (!index || !Number.isSafeInteger(Number(index[1]))) {
    return { invalid: `line ${at + 1} is not "index N" (a decimal with no leading zeros)` };
  }
  const hashes: Hash[] = [];
  for (let i = at + 1; i < lines.length; i++) {
    const hash = hashFromBase64(lines[i] as string);
    if (hash === undefined) return { invalid: `line ${i + 1} is not a base64 SHA-256 hash` };
    hashes.push(hash);
  }
  return {
    index: Number(index[1]),
    hashes,
    checkpoint: text.slice(blank + 2),
    ...(extra === undefined ? {} : { extra }),
  };
}
