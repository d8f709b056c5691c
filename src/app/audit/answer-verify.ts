import { auditRecordOfEntry } from '../../domain/audit/canonical-text.js';
import { instantOf } from '../../domain/instant.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { Disclosure, TrailGap } from '../../ports/disclosures.js';
import {
  type Hash,
  inclusionRanges,
  leafHash,
  nodeHash,
  storedIndexOf,
  subtreesOf,
  verifyInclusion,
} from '../../tlog/merkle.js';
import type { NoteVerifier } from '../../tlog/note.js';
import { AuditProofError, openCheckpoint } from './proving.js';

/**
 * A saved subject access answer checked offline (decisions §22, §23; ADR 27), as
 * `case-read subject-access verify` checks it and examples/subject-access-verify checks it with
 * Go's sumdb/tlog alone: the checkpoint opened with the log's key; the proof's hashes exactly
 * the stored hashes Go's tlog.ProveRecord reads to prove every disclosure's index in the
 * checkpoint's tree (each once, ascending stored index); then each disclosure on its own, in
 * order, its entry's leaf proved with those hashes against the signed root (what
 * ProveRecord and CheckRecord do), and what the answer shows of it (time, request id,
 * operation, recipient, on behalf of, status, index) what its entry's bytes say, its crn the
 * answer's. The first thing wrong is the error: a disclosure's, naming it.
 *
 * The answer's `gaps` (the trail's losses in the window, ADR 30) are read and their form
 * checked, each field of its type, but not proved: the answer carries no proof of them. They
 * are stated by the trail's signed continuation records, which `case-read audit verify` checks.
 *
 * Pure: the answer's JSON value, the keys and SHA-256 are handed in.
 */

/** One disclosure as the answer shows it (src/ports/disclosures.ts, `Disclosure`), its entry's base64 decoded. */
export type AnswerDisclosure = Omit<Disclosure, 'entry'> & {
  /** The entry's bytes (the answer's base64, decoded). */
  readonly entry: Uint8Array;
};

/** A subject access answer's content, as far as a check needs it; the case is not. */
export interface Answer {
  readonly crn: string;
  readonly disclosures: readonly AnswerDisclosure[];
  /**
   * The losses of the trail the answer states (each of the form the service writes; not
   * proved); undefined for an answer saved before answers stated them.
   */
  readonly gaps?: readonly TrailGap[];
  /** Present when there are disclosures: the checkpoint note, and the hashes' bytes. */
  readonly proof?: { readonly checkpoint: string; readonly hashes: Uint8Array };
}

/** What a check found: the disclosures proved, and the checkpoint they were proved against (none when there were none). */
export interface VerifiedAnswer {
  readonly crn: string;
  readonly disclosures: number;
  /** The losses the answer states, as it states them (read, not proved); absent when it states none (an older answer). */
  readonly gaps?: readonly TrailGap[];
  readonly checkpoint?: { readonly origin: string; readonly size: number };
}

/** The text is not a subject access answer: not JSON, or not shaped as one; the message says where. */
export class NotAnAnswerError extends Error {
  override readonly name = 'NotAnAnswerError';
}

/** Which disclosure of the answer: its position (1 first) among how many, its index and request id. */
export interface DisclosureNamed {
  readonly position: number;
  readonly of: number;
  readonly index: number;
  readonly requestId: string;
}

/** An answer whose proof does not hold: its checkpoint, its hashes, or one disclosure (named). */
export class AnswerNotProvedError extends Error {
  override readonly name = 'AnswerNotProvedError';
  constructor(
    message: string,
    /** The disclosure refused, when the refusal is one disclosure's. */
    readonly disclosure?: DisclosureNamed,
  ) {
    super(message);
  }
}

const nameOf = (d: DisclosureNamed) =>
  `disclosure ${d.position} of ${d.of} (index ${d.index}, requestId ${JSON.stringify(d.requestId)})`;

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Strict base64 (RFC 4648, padded), decoded; undefined when it is not. */
function base64Bytes(text: string): Uint8Array | undefined {
  const bytes = Buffer.from(text, 'base64');
  // Buffer skips what is not base64: what it decoded must write back as the text given.
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** The fields a disclosure shows, each of its JSON type. */
const SHOWN = {
  time: 'a string',
  requestId: 'a string',
  operation: 'a string',
  recipient: 'a string',
  onBehalfOf: 'a string or null',
  status: 'a number',
  index: 'a whole number',
  entry: 'base64',
} as const;

function disclosureOf(value: Json, position: number): AnswerDisclosure {
  const at = `content.disclosures[${position - 1}]`;
  if (!isObject(value)) throw new NotAnAnswerError(`${at} is not an object`);
  for (const [field, kind] of Object.entries(SHOWN)) {
    const v = value[field];
    const fits =
      kind === 'a string or null'
        ? v === null || typeof v === 'string'
        : kind === 'a number'
          ? typeof v === 'number'
          : kind === 'a whole number'
            ? Number.isSafeInteger(v) && (v as number) >= 0
            : typeof v === 'string';
    if (!fits) throw new NotAnAnswerError(`${at}.${field} is not ${kind}`);
  }
  const entry = base64Bytes(value.entry as string);
  if (entry === undefined) throw new NotAnAnswerError(`${at}.entry is not base64`);
  return {
    time: value.time as string,
    requestId: value.requestId as string,
    operation: value.operation as string,
    recipient: value.recipient as string,
    onBehalfOf: value.onBehalfOf as string | null,
    status: value.status as number,
    index: value.index as number,
    entry,
  };
}

/** ISO 8601 UTC to the millisecond, as the service writes a time (Date.toISOString). */
const isTime = (v: Json): v is string => typeof v === 'string' && instantOf(v) !== undefined;

/** One of the answer's gaps, its form checked (each field of its type); what it says is not proved here. */
function gapOf(value: Json, position: number): TrailGap {
  const at = `content.gaps[${position - 1}]`;
  if (!isObject(value)) throw new NotAnAnswerError(`${at} is not an object`);
  if (value.from !== null && !isTime(value.from))
    throw new NotAnAnswerError(`${at}.from is not a time (ISO 8601 UTC) or null`);
  if (!isTime(value.to)) throw new NotAnAnswerError(`${at}.to is not a time (ISO 8601 UTC)`);
  if (!Number.isSafeInteger(value.recordsLost) || (value.recordsLost as number) < 1)
    throw new NotAnAnswerError(`${at}.recordsLost is not a whole number above 0`);
  if (typeof value.reason !== 'string' || value.reason === '')
    throw new NotAnAnswerError(`${at}.reason is not a string of text`);
  return {
    from: value.from as string | null,
    to: value.to,
    recordsLost: value.recordsLost as number,
    reason: value.reason,
  };
}

/**
 * The answer in `text` (`{"content":{"crn":…,"gaps":[…],"disclosures":[…],"proof":{…}}}`, as
 * serve answers and `case-read subject-access` prints it), read and shaped; a NotAnAnswerError
 * naming what is not as an answer has it. `gaps` may be absent (an answer saved before answers
 * stated them); present, it is a list of gaps of the service's form.
 */
export function readAnswer(text: string): Answer {
  let value: Json;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new NotAnAnswerError(`it is not JSON (${(error as Error).message})`);
  }
  if (!isObject(value) || !isObject(value.content)) throw new NotAnAnswerError('it has no "content" object');
  const { content } = value;
  if (typeof content.crn !== 'string') throw new NotAnAnswerError('content.crn is not a string');
  if (!Array.isArray(content.disclosures)) throw new NotAnAnswerError('content.disclosures is not a list');
  if (content.gaps !== undefined && !Array.isArray(content.gaps))
    throw new NotAnAnswerError('content.gaps is not a list');
  const gaps = content.gaps?.map((g: Json, i: number) => gapOf(g, i + 1));
  const stated = gaps === undefined ? {} : { gaps };
  const disclosures = content.disclosures.map((d: Json, i: number) => disclosureOf(d, i + 1));
  if (content.proof === undefined) {
    if (disclosures.length > 0) {
      throw new NotAnAnswerError('it has disclosures and no content.proof to prove them with');
    }
    return { crn: content.crn, ...stated, disclosures };
  }
  if (disclosures.length === 0) throw new NotAnAnswerError('it has a content.proof and no disclosure');
  const { proof } = content;
  if (!isObject(proof) || typeof proof.checkpoint !== 'string' || typeof proof.hashes !== 'string') {
    throw new NotAnAnswerError('content.proof is not {"checkpoint": string, "hashes": string}');
  }
  const hashes = base64Bytes(proof.hashes);
  if (hashes === undefined) throw new NotAnAnswerError('content.proof.hashes is not base64');
  return { crn: content.crn, ...stated, disclosures, proof: { checkpoint: proof.checkpoint, hashes } };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The first of `shown`'s fields that its entry's record does not say as the answer shows it: what each says. */
function fieldsDiffer(answer: Answer, shown: AnswerDisclosure): string | undefined {
  let text: string;
  try {
    text = UTF8.decode(shown.entry);
  } catch {
    return 'its entry is not UTF-8 text, so no audit record';
  }
  // The entry is proved already: the record's own chain hash is not needed, only its fields.
  const record = auditRecordOfEntry(text, () => '');
  if (record === undefined) return 'its entry is not an audit record';
  const said: [string, unknown, unknown][] = [
    ['time', shown.time, record.at.toISOString()],
    ['requestId', shown.requestId, record.requestId],
    ['operation', shown.operation, record.operation],
    ['recipient', shown.recipient, record.clientId],
    ['onBehalfOf', shown.onBehalfOf, record.onBehalfOf],
    ['status', shown.status, record.status],
    ['index', shown.index, record.seq - 1],
    ['crn', answer.crn, record.crn],
  ];
  for (const [field, answered, entry] of said) {
    if (answered !== entry) {
      return field === 'crn'
        ? `its entry names the crn ${JSON.stringify(entry)}, not the answer's ${JSON.stringify(answered)}`
        : field === 'index'
          ? `its index is ${answered}, its entry is record ${record.seq} (index ${entry})`
          : `its ${field} is ${JSON.stringify(answered)}, its entry says ${JSON.stringify(entry)}`;
    }
  }
  return undefined;
}

/**
 * Checks `answer` with the log's `keys`: every disclosure proved in the tree the checkpoint
 * signs, and shown as its entry says. Throws an AnswerNotProvedError naming the first thing
 * wrong (the checkpoint, the hashes, or a disclosure); an answer of no disclosures has nothing
 * to prove. Its gaps are handed back as read, not proved.
 */
export function verifyAnswer(
  answer: Answer,
  keys: readonly NoteVerifier[],
  hashes: AuditHashes,
): VerifiedAnswer {
  const { disclosures, proof } = answer;
  const stated = answer.gaps === undefined ? {} : { gaps: answer.gaps };
  if (proof === undefined) return { crn: answer.crn, ...stated, disclosures: 0 };
  const of = disclosures.length;
  const named = (d: AnswerDisclosure, position: number): DisclosureNamed => ({
    position,
    of,
    index: d.index,
    requestId: d.requestId,
  });
  const refuse = (d: AnswerDisclosure, position: number, why: string) => {
    const which = named(d, position);
    return new AnswerNotProvedError(`${nameOf(which)} ${why}`, which);
  };

  let opened: ReturnType<typeof openCheckpoint>;
  try {
    opened = openCheckpoint(proof.checkpoint, keys, "the answer's checkpoint");
  } catch (error) {
    if (error instanceof AuditProofError) throw new AnswerNotProvedError(error.message);
    throw error;
  }
  const { size, root, origin } = opened.body;

  // The indexes, ascending, distinct, in the tree: as the proof's hashes were planned.
  let previous = -1;
  for (const [i, d] of disclosures.entries()) {
    if (d.index <= previous) {
      throw refuse(
        d,
        i + 1,
        `is not after the one before it (index ${previous}): the disclosures are in ascending index, each once`,
      );
    }
    if (d.index >= size) {
      throw refuse(d, i + 1, `is not in the tree of ${size} records the checkpoint signs`);
    }
    previous = d.index;
  }

  // The stored hashes each disclosure's inclusion proof is made of (what Go's tlog.ProveRecord
  // reads for its index), all told, each once, ascending: the proof's hashes are those, in that
  // order. Found here from RFC 9162's paths, not from the plan the service made them by.
  const asked = new Set<number>();
  for (const d of disclosures) {
    for (const range of inclusionRanges(d.index, size)) {
      for (const piece of subtreesOf(range)) asked.add(storedIndexOf(piece));
    }
  }
  const stored = Float64Array.from(asked).sort();
  if (proof.hashes.length % 32 !== 0) {
    throw new AnswerNotProvedError(
      `the proof's hashes are ${proof.hashes.length} bytes, not a whole number of 32-byte hashes`,
    );
  }
  if (proof.hashes.length !== stored.length * 32) {
    throw new AnswerNotProvedError(
      `the proof holds ${proof.hashes.length / 32} hashes, and its disclosures' proofs in the tree of ${size} need ${stored.length}: hashes were added or left out`,
    );
  }
  /** The proof's hash of stored index `i`, one of `stored`. */
  const hashOf = (i: number): Hash => {
    let lo = 0;
    let hi = stored.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((stored[mid] as number) < i) lo = mid + 1;
      else hi = mid;
    }
    return proof.hashes.subarray(lo * 32, lo * 32 + 32);
  };

  const { sha256 } = hashes;
  for (const [i, d] of disclosures.entries()) {
    // Its inclusion proof, as tlog.ProveRecord makes it from the proof's hashes: each range of
    // RFC 9162's path, from the stored hashes of the whole subtrees it is made of.
    const path = inclusionRanges(d.index, size).map((range) => {
      const pieces = subtreesOf(range).map((piece) => hashOf(storedIndexOf(piece)));
      let hash = pieces[pieces.length - 1] as Hash;
      for (let k = pieces.length - 2; k >= 0; k--) hash = nodeHash(sha256, pieces[k] as Hash, hash);
      return hash;
    });
    if (!verifyInclusion(sha256, d.index, size, leafHash(sha256, d.entry), path, root)) {
      throw refuse(
        d,
        i + 1,
        `is not proved: its entry and the proof's hashes do not make the root the checkpoint of ${size} records signs (the entry or a hash was changed)`,
      );
    }
    const differs = fieldsDiffer(answer, d);
    if (differs !== undefined) {
      throw refuse(d, i + 1, `is not what its entry says: ${differs}`);
    }
  }
  return { crn: answer.crn, ...stated, disclosures: of, checkpoint: { origin, size } };
}
