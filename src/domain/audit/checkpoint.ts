import type { Hash } from '../../tlog/merkle.js';
import { checkpointText, hasControl, signatureLineParts, signNote } from '../../tlog/note.js';

/**
 * Signed checkpoints of the audit chain (decisions §9). A hash chain shows a record changed
 * in the middle, but not records cut off its end, nor a chain recomputed from scratch by
 * someone who can write to the store. Like Certificate Transparency's signed tree heads, the
 * service signs the chain's head now and then and keeps the signature outside the store too
 * (its log): a trail that no longer passes through a signed head, or ends before one, was
 * changed.
 */

/** The last record of the chain: its number and its hash. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** One signed checkpoint: the chain's head at `seq`, when it was signed, and by which key. */
export interface AuditCheckpoint {
  /** The number of the last record the checkpoint covers. */
  readonly seq: number;
  /** That record's hash. */
  readonly head: string;
  /** When it was signed, ISO 8601 in UTC, exactly as signed. */
  readonly time: string;
  /** The signing key's id: the RFC 7638 thumbprint of its public key. */
  readonly keyId: string;
  /** Ed25519 over {@link checkpointSignedText}, base64url. */
  readonly signature: string;
  /**
   * The same moment as a C2SP tlog-checkpoint signed note (decisions §14): the log's origin,
   * the tree's size (= `seq`) and its root, signed by the same key under the origin's name.
   * Absent on checkpoints made before the tree.
   */
  readonly note?: string;
  /**
   * Witnesses' cosignatures of the note (decisions §19, C2SP tlog-cosignature), each one
   * signature line `— NAME BASE64` without its newline, as the store keeps them beside the
   * checkpoint: added after it was signed, covered by no signature of the log's. Absent (or
   * empty) when no witness has cosigned it.
   */
  readonly cosignatures?: readonly string[];
}

export type UnsignedCheckpoint = Omit<AuditCheckpoint, 'signature' | 'note' | 'cosignatures'>;

/**
 * The text a checkpoint's signature covers: a fixed label and version, then every field but
 * the signature, as a JSON array. The label keeps a checkpoint signature from being taken
 * for anything else the key might sign.
 */
export const checkpointSignedText = (c: UnsignedCheckpoint): string =>
  JSON.stringify(['case-read audit checkpoint', 1, c.seq, c.head, c.time, c.keyId]);

/**
 * The checkpoint of `head` at `time`, signed by `signer` (the port `CheckpointSigner`, named
 * here by its shape): the one way a checkpoint is made. Given the tree's root at the head
 * (decisions §14), it carries the C2SP checkpoint note of it too, signed by the same key
 * under the log's origin.
 */
export function signCheckpoint(
  head: ChainHead,
  time: Date,
  signer: {
    readonly keyId: string;
    sign(text: string): string;
    readonly note?: { readonly name: string; readonly keyId: number; sign(message: Uint8Array): Uint8Array };
  },
  root?: Hash,
): AuditCheckpoint {
  const unsigned: UnsignedCheckpoint = {
    seq: head.seq,
    head: head.hash,
    time: time.toISOString(),
    keyId: signer.keyId,
  };
  const signature = signer.sign(checkpointSignedText(unsigned));
  if (root === undefined) return { ...unsigned, signature };
  if (signer.note === undefined)
    throw new Error('a checkpoint of the tree needs a signed-note key to sign its note');
  return {
    ...unsigned,
    signature,
    note: signNote(checkpointText(signer.note.name, head.seq, root), signer.note),
  };
}

const HASH = /^[0-9a-f]{64}$/;
/** The longest note a checkpoint carries: a few lines and a few signatures. */
const MAX_NOTE = 8192;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/**
 * A checkpoint read from outside (a store row, a line of a file), or a reason it is not
 * one. Only the form is checked here; the signature is checked against a public key.
 */
export function checkpointOf(value: unknown): AuditCheckpoint | { readonly invalid: string } {
  if (typeof value !== 'object' || value === null) return { invalid: 'not an object' };
  const v = value as Record<string, unknown>;
  if (!Number.isSafeInteger(v.seq) || (v.seq as number) < 1) return { invalid: 'seq is not a record number' };
  if (typeof v.head !== 'string' || !HASH.test(v.head)) return { invalid: 'head is not a SHA-256 hash' };
  if (typeof v.time !== 'string' || !ISO_UTC.test(v.time) || Number.isNaN(Date.parse(v.time)))
    return { invalid: 'time is not an ISO 8601 time in UTC' };
  if (typeof v.keyId !== 'string' || !BASE64URL.test(v.keyId) || v.keyId.length > 128)
    return { invalid: 'keyId is not a key id' };
  if (typeof v.signature !== 'string' || !BASE64URL.test(v.signature) || v.signature.length > 256)
    return { invalid: 'signature is not base64url' };
  if (v.note !== undefined && v.note !== null && (typeof v.note !== 'string' || v.note.length > MAX_NOTE))
    return { invalid: 'note is not a signed note' };
  const cosignatures =
    v.cosignatures === undefined || v.cosignatures === null ? [] : cosignaturesOf(v.cosignatures);
  if ('invalid' in cosignatures) return cosignatures;
  const read = { seq: v.seq as number, head: v.head, time: v.time, keyId: v.keyId, signature: v.signature };
  return {
    ...read,
    ...(typeof v.note === 'string' ? { note: v.note } : {}),
    ...(cosignatures.length > 0 ? { cosignatures } : {}),
  };
}

/**
 * The most cosignatures a checkpoint keeps: with the log's own signature, the 100 signature
 * lines a signed note may carry (Go's note.Open refuses more), so the note with every one of
 * them added still opens.
 */
export const MAX_COSIGNATURES = 99;
/** The longest cosignature line kept: a name of up to 256 characters and far more than a cosignature's 104 of base64. */
const MAX_COSIGNATURE_LINE = 512;
/**
 * Whether `line` is one signature line of a signed note, `— NAME BASE64` without its newline,
 * as a note is opened (tlog/note.ts signatureLineParts), with no control character (the newline
 * included: it would end the line), no U+FFFD, at most 512 characters. Its signature is not
 * checked here: the witness's key does that.
 */
export const isSignatureLine = (line: unknown): line is string =>
  typeof line === 'string' &&
  line.length <= MAX_COSIGNATURE_LINE &&
  !line.includes('\n') &&
  !line.includes('\uFFFD') &&
  !hasControl(line) &&
  signatureLineParts(line) !== undefined;

/** Cosignature lines read from outside (a store's column, a line of a file), or what is wrong with them. */
export function cosignaturesOf(value: unknown): readonly string[] | { readonly invalid: string } {
  if (!Array.isArray(value)) return { invalid: 'cosignatures is not a list of signature lines' };
  if (value.length > MAX_COSIGNATURES)
    return { invalid: `cosignatures holds ${value.length} lines, more than ${MAX_COSIGNATURES}` };
  const bad = value.findIndex((line) => !isSignatureLine(line));
  if (bad !== -1) return { invalid: `cosignature ${bad + 1} is not a signature line "— NAME BASE64"` };
  return [...(value as string[])];
}

/**
 * The cosignatures of a checkpoint once `added` join those it holds (`held`): each line once,
 * those held first, then the new ones in the order given; `fresh` are the lines it did not
 * hold. Refused, naming why, when a line given is not a signature line or there would be more
 * than {@link MAX_COSIGNATURES}.
 */
export function mergeCosignatures(
  held: readonly string[] | undefined,
  added: readonly string[],
): { readonly lines: readonly string[]; readonly fresh: readonly string[] } | { readonly invalid: string } {
  const bad = added.find((line) => !isSignatureLine(line));
  if (bad !== undefined)
    return { invalid: `${JSON.stringify(String(bad).slice(0, 80))} is not a signature line "— NAME BASE64"` };
  const lines = [...(held ?? [])];
  const seen = new Set(lines);
  const fresh: string[] = [];
  for (const line of added) {
    if (seen.has(line)) continue;
    seen.add(line);
    fresh.push(line);
    lines.push(line);
  }
  if (lines.length > MAX_COSIGNATURES)
    return { invalid: `it would hold ${lines.length} cosignatures, more than ${MAX_COSIGNATURES}` };
  return { lines, fresh };
}

/**
 * What makes one checkpoint the same as another read elsewhere: its key and its signature
 * (the signature covers every other field).
 */
export const checkpointIdOf = (c: AuditCheckpoint): string => `${c.keyId} ${c.signature}`;

/** How a checkpoint is named in a message: its seq, its time and the start of its key id. */
export const describeCheckpoint = (c: AuditCheckpoint): string =>
  `checkpoint at seq ${c.seq} (${c.time}, key ${c.keyId.slice(0, 12)})`;

/**
 * The checkpoints a chain is checked against, each already verified: by record number.
 * The same checkpoint read from several places (the store, an export, a log) counts once.
 * Memory grows with the checkpoints, one small entry each, not with the records.
 */
export class CheckpointSet {
  private readonly bySeq = new Map<number, AuditCheckpoint[]>();
  private highest: AuditCheckpoint | undefined;
  /** The tree's root at each size a verified checkpoint note signed (decisions §14). */
  private readonly roots = new Map<number, Hash>();

  /**
   * Notes the tree's root a verified note signed at `size`; false when another verified
   * note signed a different root at that size (a fork: two trails under one key).
   */
  addRoot(size: number, root: Hash): boolean {
    const held = this.roots.get(size);
    if (held !== undefined) return held.length === root.length && held.every((b, i) => b === root[i]);
    this.roots.set(size, root);
    return true;
  }

  /** The signed root of the tree of `size` leaves, if a verified note gave one. */
  rootAt(size: number): Hash | undefined {
    return this.roots.get(size);
  }

  /** Whether any verified note gave a root: then a walk keeps the tree to check them. */
  get hasRoots(): boolean {
    return this.roots.size > 0;
  }

  /** Adds a verified checkpoint; false when the set held it already. */
  add(checkpoint: AuditCheckpoint): boolean {
    const held = this.bySeq.get(checkpoint.seq);
    const id = checkpointIdOf(checkpoint);
    if (held?.some((c) => checkpointIdOf(c) === id)) return false;
    if (held) held.push(checkpoint);
    else this.bySeq.set(checkpoint.seq, [checkpoint]);
    if (this.highest === undefined || checkpoint.seq > this.highest.seq) this.highest = checkpoint;
    return true;
  }

  /** The checkpoints made at record `seq`. */
  at(seq: number): readonly AuditCheckpoint[] | undefined {
    return this.bySeq.get(seq);
  }

  /** The lowest checkpoint after record `seq`, if any: what a chain ending at `seq` fell short of. */
  firstAfter(seq: number): AuditCheckpoint | undefined {
    if (this.highest === undefined || this.highest.seq <= seq) return undefined;
    let first: number | undefined;
    for (const at of this.bySeq.keys()) if (at > seq && (first === undefined || at < first)) first = at;
    return first === undefined ? undefined : this.bySeq.get(first)?.[0];
  }

  /** The checkpoint with the highest seq. */
  get newest(): AuditCheckpoint | undefined {
    return this.highest;
  }

  /** How many distinct checkpoints it holds. */
  get size(): number {
    let n = 0;
    for (const held of this.bySeq.values()) n += held.length;
    return n;
  }
}
