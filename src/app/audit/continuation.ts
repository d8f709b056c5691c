import {
  continuationText,
  parseContinuationText,
  recordsLost,
  type TrailContinuation,
} from '../../domain/audit/continuation.js';
import { isContinuation, type StoredAuditRecord } from '../../domain/audit/record.js';
import type { AuditContinuations } from '../../ports/audit-log.js';
import type { NoteSigner } from '../../ports/checkpoint-keys.js';
import type { Sha256 } from '../../tlog/merkle.js';
import {
  type NoteVerifier,
  type NoteVerifierKey,
  noteKeyId,
  noteTextOf,
  openNote,
  parseVerifierKey,
  publicKeyHex,
  signatureLinesOf,
  signNote,
  verifyWith,
} from '../../tlog/note.js';

/**
 * A trail's continuation statements, signed and opened (ADR 30; the format is
 * src/domain/audit/continuation.ts): signed by the log's key under the new origin, opened with
 * the log's keys named by the origin the statement names, never taken on trust.
 */

/** A continuation record that cannot be read or whose statement does not verify: the trail is not whole. */
export class ContinuationError extends Error {
  override readonly name = 'ContinuationError';
}

/**
 * The statement signed by the new log's key (`signer`, named by the new origin) and by the key
 * of the log before (`previous`, named by its origin): each log vouches for the continuation,
 * so a reader holding either log's verifier key can check it.
 */
export function signContinuation(
  continuation: TrailContinuation,
  signer: NoteSigner,
  previous: NoteSigner,
): string {
  if (signer.name !== continuation.origin || previous.name !== continuation.previous)
    throw new ContinuationError(
      `the keys name ${signer.name} and ${previous.name}, the continuation ${continuation.origin} and ${continuation.previous}`,
    );
  const text = continuationText(continuation);
  const byPrevious = signatureLinesOf(signNote(text, previous));
  return `${signNote(text, signer)}${byPrevious.map((line) => `${line}\n`).join('')}`;
}

/** The same public keys as note keys named `name`: one key signs the trail under each origin it had. */
export function keysNamed(keys: readonly NoteVerifier[], name: string, sha256: Sha256): NoteVerifier[] {
  return keys.map((key) => ({
    name,
    keyId: noteKeyId(sha256, name, key.publicKey),
    publicKey: key.publicKey,
    verify: (message, signature) => key.verify(message, signature),
  }));
}

/** One continuation, opened: its statement and where it stands in the trail. */
export interface OpenedContinuation extends TrailContinuation {
  /** The record's seq: `kept + 1`. */
  readonly seq: number;
  readonly lost: number;
}

/**
 * A continuation record's statement, its signature checked with `keys` (any origin's: they are
 * named by the origin the statement names) and its place checked: the record is `kept + 1`, at
 * the break's time. Throws a ContinuationError naming what is wrong. Without keys (`audit
 * verify` given none), the statement is read and placed, its signature left to a run with keys.
 */
export function openContinuation(
  record: StoredAuditRecord,
  keys: readonly NoteVerifier[] | undefined,
  sha256: Sha256,
): OpenedContinuation {
  const at = `the continuation record ${record.seq}`;
  if (!isContinuation(record)) throw new ContinuationError(`${at} carries no statement`);
  const note = record.continuation as string;
  // The two logs' names, read before the signatures are checked (the text is parsed after).
  const lines = note.split('\n', 6);
  const named = (field: string) =>
    lines.find((line) => line.startsWith(`${field} `))?.slice(field.length + 1) ?? '';
  const origin = named('origin');
  const previous = named('previous');
  let text = noteTextOf(note);
  if (keys !== undefined) {
    // Signed by the new log's key and the old one's, each under its log's name: either opens
    // it, and a signature by a key given that does not verify refuses it. verifyWith matches
    // keys by identity: the note is opened with the list that checks it.
    const renamed = [...keysNamed(keys, origin, sha256), ...keysNamed(keys, previous, sha256)];
    const opened = openNote(note, renamed, verifyWith(renamed));
    if (!opened.ok)
      throw new ContinuationError(
        `${at}: its statement does not verify with the log's keys (${opened.reason})`,
      );
    text = opened.text;
  }
  if (text === undefined) throw new ContinuationError(`${at}: its statement is not a signed note`);
  const statement = parseContinuationText(text);
  if ('invalid' in statement) throw new ContinuationError(`${at}: ${statement.invalid}`);
  if (statement.kept + 1 !== record.seq)
    throw new ContinuationError(
      `${at} states ${statement.kept} records kept: it is not record ${statement.kept + 1}`,
    );
  if (statement.broke.getTime() !== record.at.getTime())
    throw new ContinuationError(`${at} is not dated at the break its statement names`);
  return { ...statement, seq: record.seq, lost: recordsLost(statement) };
}

/**
 * Every continuation of a trail, opened, oldest first, each checked against the one before:
 * the log a continuation leaves is the one the one before it began.
 */
export function openContinuations(
  records: readonly StoredAuditRecord[],
  keys: readonly NoteVerifier[] | undefined,
  sha256: Sha256,
): OpenedContinuation[] {
  const opened = records.map((record) => openContinuation(record, keys, sha256));
  for (let i = 1; i < opened.length; i++) {
    const before = opened[i - 1] as OpenedContinuation;
    const next = opened[i] as OpenedContinuation;
    if (next.previous !== before.origin || next.seq <= before.seq)
      throw new ContinuationError(
        `the continuation record ${next.seq} leaves the log ${next.previous}, but the one before it began ${before.origin}`,
      );
  }
  return opened;
}

/**
 * The origin a checkpoint of `size` records must name, given the trail's continuations: the
 * log that held the trail at that size (a continuation's log begins at its own record).
 */
export function originAt(
  size: number,
  continuations: readonly OpenedContinuation[],
  current: string,
): string {
  for (const c of continuations) if (size <= c.kept) return c.previous;
  return continuations.at(-1)?.origin ?? current;
}

/**
 * `keys` and the same keys named by every origin the trail had before (each continuation's
 * previous log): what opens every checkpoint of a continued trail.
 */
export function keysOfEveryOrigin(
  keys: readonly NoteVerifier[],
  continuations: readonly OpenedContinuation[],
  sha256: Sha256,
): NoteVerifier[] {
  const names = new Set(keys.map((key) => key.name));
  const more = continuations
    .map((c) => c.previous)
    .filter((name) => !names.has(name))
    .flatMap((name) => keysNamed(keys, name, sha256));
  return [...keys, ...more];
}

/** What a continuation says, in one line: for `audit verify` and `audit continue`. */
export function continuationLine(c: OpenedContinuation): string {
  return `continued at record ${c.seq}: ${c.previous} kept ${c.kept} records, its witnesses held ${c.held}: ${c.lost} record${c.lost === 1 ? '' : 's'} lost, written between ${c.lastKept?.toISOString() ?? "the trail's start"} and ${c.broke.toISOString()} (${c.reason}); the trail goes on as ${c.origin}`;
}

/** A continuation as JSON output shows it. */
export const continuationData = (c: OpenedContinuation) => ({
  seq: c.seq,
  previous: c.previous,
  origin: c.origin,
  kept: c.kept,
  held: c.held,
  lost: c.lost,
  lastKept: c.lastKept?.toISOString() ?? null,
  break: c.broke.toISOString(),
  reason: c.reason,
});

/** A continued trail's statements, opened, and the keys of the logs they name. */
export interface TrustedContinuations {
  readonly opened: readonly OpenedContinuation[];
  /** The keys of the logs the statements name, each named by its log's origin, learned from them. */
  readonly learned: readonly NoteVerifier[];
}

/**
 * The keys of every log a continued trail has had, learned from its statements (each names the
 * verifier keys of the logs either side of its break, and is signed by both) and anchored in
 * `given`: a statement one of whose keys is given, or learned from another so anchored, makes
 * both its keys known. Each statement's two signatures are checked with the keys it states;
 * then every statement is opened ({@link openContinuations}) with the keys given and learned.
 * A ContinuationError names one that does not hold, or that no key given reaches.
 */
export function trustedContinuations(
  records: readonly StoredAuditRecord[],
  given: readonly NoteVerifier[],
  sha256: Sha256,
  verifierOf: (key: NoteVerifierKey) => NoteVerifier,
): TrustedContinuations {
  const stated = records.map((record) => {
    const c = openContinuation(record, undefined, sha256);
    const at = `the continuation record ${record.seq}`;
    const keys = [c.vkey, c.previousVkey].map((line) => {
      const key = parseVerifierKey(sha256, line);
      if ('invalid' in key)
        throw new ContinuationError(`${at} states a verifier key that is not one: ${key.invalid}`);
      return verifierOf(key);
    });
    for (const key of keys) {
      const opened = openNote(record.continuation as string, [key], verifyWith([key]));
      if (!opened.ok)
        throw new ContinuationError(
          `${at} is not signed by the key it states for ${key.name} (${opened.reason}): each log's key signs its continuation`,
        );
    }
    return { seq: record.seq, keys };
  });
  const trusted = new Set(given.map(publicKeyHex));
  const anchored = new Set<number>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const { seq, keys } of stated) {
      if (anchored.has(seq) || !keys.some((key) => trusted.has(publicKeyHex(key)))) continue;
      anchored.add(seq);
      for (const key of keys) trusted.add(publicKeyHex(key));
      grew = true;
    }
  }
  const loose = stated.find(({ seq }) => !anchored.has(seq));
  if (loose !== undefined)
    throw new ContinuationError(
      `the continuation record ${loose.seq} is signed by keys none given reaches (${loose.keys.map((k) => k.name).join(', ')}): give the verifier key of the trail's log now, or of one its continuations name`,
    );
  const learned = stated.flatMap(({ keys }) => keys);
  return { opened: openContinuations(records, [...given, ...learned], sha256), learned };
}

/**
 * `keys` and the keys of every log the trail has had (learned from its continuations, anchored in
 * `keys`), each named by every origin: what opens an archive or a checkpoint signed before a
 * break. Throws a ContinuationError when a continuation cannot be read or trusted.
 */
export async function keysOfTrail(
  log: AuditContinuations,
  keys: readonly NoteVerifier[],
  sha256: Sha256,
  verifierOf: (key: NoteVerifierKey) => NoteVerifier,
): Promise<NoteVerifier[]> {
  if (keys.length === 0) return [];
  const records = await log.continuations();
  if (records.length === 0) return [...keys];
  const { opened, learned } = trustedContinuations(records, keys, sha256, verifierOf);
  return [...keysOfEveryOrigin(keys, opened, sha256), ...learned];
}
