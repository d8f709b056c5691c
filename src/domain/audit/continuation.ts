import { hasControl } from '../../tlog/note.js';
import { instantOf } from '../instant.js';
import type { AuditRecord } from './record.js';

/**
 * A trail's continuation after a loss (ADR 30): when the store lost its last records (a
 * restore from backup, a failover to a standby behind), the trail goes on as a new log under a
 * new origin, its first new entry a statement of the loss. The log never pretends the lost
 * records did not exist: the statement says which log went before, how many of its records
 * were kept, how many its witnesses held, from when to when records are gone, and why.
 *
 * The statement is a signed note (C2SP signed-note) under the new origin, by the log's key, its
 * text (first line `case-read trail continuation/v1`, which no checkpoint's origin is):
 *
 * ```
 * case-read trail continuation/v1
 * origin NEW
 * vkey NEW+KEYID+KEY                       (the new log's verifier key)
 * previous OLD
 * previous-vkey OLD+KEYID+KEY              (the verifier key of the log before)
 * kept 120
 * held 320
 * last-kept 2026-12-02T04:00:00.000Z      (or `none` when no record was kept)
 * break 2026-12-02T05:10:00.000Z
 * reason restored from the 04:00 backup (INC-1234)
 * ```
 *
 * Signed by both keys, it links the logs both ways: a reader holding either log's key learns
 * the other's from it, however many breaks there were.
 *
 * It is carried, signed, by the record at seq `kept + 1` (format version 5), an entry of the
 * tree like any other: the checkpoints from it on name the new origin, those before the old.
 */

/** The first line of a continuation statement. */
export const CONTINUATION_HEADER = 'case-read trail continuation/v1';
/** The operation of the record that carries one, the client it names, and its status. */
export const CONTINUATION_OPERATION = 'continueTrail';
export const CONTINUATION_CLIENT = 'case-read audit continue';
/** The longest reason, in characters. */
export const REASON_MAX = 500;

export interface TrailContinuation {
  /** The log that goes on from here (the new origin). */
  readonly origin: string;
  /** Its verifier key (`NEW+KEYID+KEY`): a log has a key of its own. */
  readonly vkey: string;
  /** The log that went before. */
  readonly previous: string;
  /** Its verifier key. */
  readonly previousVkey: string;
  /** The records of the previous log kept: the continuation record is `kept + 1`. */
  readonly kept: number;
  /** The most records the previous log's witnesses (or its archive) held: `held − kept` are lost. */
  readonly held: number;
  /** When the last kept record was written; null when none was kept. */
  readonly lastKept: Date | null;
  /** When the trail was continued. */
  readonly broke: Date;
  readonly reason: string;
}

const NOT_TEXT = /\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Records lost at a continuation. */
export const recordsLost = (c: Pick<TrailContinuation, 'kept' | 'held'>): number => c.held - c.kept;

/** Why a reason cannot be stated, or undefined when it can: one line of text, 1 to 500 characters. */
export function reasonProblem(reason: string): string | undefined {
  if (reason.trim().length === 0) return 'it is empty';
  if (reason.length > REASON_MAX) return `it is longer than ${REASON_MAX} characters`;
  if (hasControl(reason) || reason.includes('\n') || reason !== reason.trim())
    return 'it is one line of text, without control characters or spaces at its ends';
  // What a signed note cannot carry (C2SP signed-note, as Go reads one).
  if (NOT_TEXT.test(reason)) return 'it holds U+FFFD or a lone surrogate, which no signed note carries';
  return undefined;
}

/** The statement's text (what the log's key signs). Throws when it cannot be one. */
export function continuationText(c: TrailContinuation): string {
  const problem = reasonProblem(c.reason);
  if (problem !== undefined) throw new Error(`the reason cannot be stated: ${problem}`);
  if (!Number.isSafeInteger(c.kept) || c.kept < 0 || !Number.isSafeInteger(c.held) || c.held <= c.kept)
    throw new Error(`a continuation keeps fewer records than were held (kept ${c.kept}, held ${c.held})`);
  return [
    CONTINUATION_HEADER,
    `origin ${c.origin}`,
    `vkey ${c.vkey}`,
    `previous ${c.previous}`,
    `previous-vkey ${c.previousVkey}`,
    `kept ${c.kept}`,
    `held ${c.held}`,
    `last-kept ${c.lastKept === null ? 'none' : c.lastKept.toISOString()}`,
    `break ${c.broke.toISOString()}`,
    `reason ${c.reason}`,
    '',
  ].join('\n');
}

const NUMBER = /^(0|[1-9][0-9]{0,15})$/;

/** A statement's text read back (the text as signed, its signatures off), or what is wrong with it. */
export function parseContinuationText(text: string): TrailContinuation | { readonly invalid: string } {
  const lines = text.split('\n');
  const invalid = (why: string) => ({ invalid: `not a continuation statement: ${why}` });
  const names = [
    'origin',
    'vkey',
    'previous',
    'previous-vkey',
    'kept',
    'held',
    'last-kept',
    'break',
    'reason',
  ];
  if (lines.length !== names.length + 2 || lines.at(-1) !== '' || lines[0] !== CONTINUATION_HEADER)
    return invalid(`it is not the ${names.length + 1} lines of ${CONTINUATION_HEADER}`);
  const fields = new Map<string, string>();
  for (const [i, name] of names.entries()) {
    const line = lines[i + 1] as string;
    if (!line.startsWith(`${name} `)) return invalid(`line ${i + 2} is not "${name} …"`);
    fields.set(name, line.slice(name.length + 1));
  }
  const field = (name: string) => fields.get(name) as string;
  const time = (name: string): Date | undefined => instantOf(field(name));
  if (!NUMBER.test(field('kept')) || !NUMBER.test(field('held')))
    return invalid('kept or held is not a number');
  const kept = Number(field('kept'));
  const held = Number(field('held'));
  if (held <= kept) return invalid(`held (${held}) is not more than kept (${kept})`);
  const lastKept = field('last-kept') === 'none' ? null : time('last-kept');
  const broke = time('break');
  if (lastKept === undefined || broke === undefined)
    return invalid('a time is not ISO 8601 UTC to the millisecond');
  if ((lastKept === null) !== (kept === 0))
    return invalid('last-kept is none exactly when no record was kept');
  const reason = field('reason');
  if (reasonProblem(reason) !== undefined) return invalid('the reason is not one line of text');
  if (field('origin') === '' || field('previous') === '' || field('origin') === field('previous'))
    return invalid('the origins are empty or the same');
  // A verifier key is NAME+KEYID+KEY, its name the log's origin (its key checked by whoever opens it).
  const named = (vkey: string, origin: string) => vkey.startsWith(`${origin}+`) && !vkey.includes(' ');
  if (!named(field('vkey'), field('origin')) || !named(field('previous-vkey'), field('previous')))
    return invalid("a verifier key is not named by its log's origin");
  // The key itself is after the name and the key id (which differ with the name alone).
  const keyOf = (vkey: string) => vkey.split('+').slice(2).join('+');
  if (keyOf(field('vkey')) === keyOf(field('previous-vkey')))
    return invalid('the two logs have the same key: a new log has a key of its own');
  return {
    origin: field('origin'),
    vkey: field('vkey'),
    previous: field('previous'),
    previousVkey: field('previous-vkey'),
    kept,
    held,
    lastKept,
    broke,
    reason,
  };
}

/**
 * The record that carries a signed statement: at the break's time, naming the command as its
 * client, for no crn. Appended as record `kept + 1` (version 5).
 */
export function continuationRecord(c: TrailContinuation, note: string, requestId: string): AuditRecord {
  return {
    at: c.broke,
    requestId,
    clientId: CONTINUATION_CLIENT,
    certificateSerial: '',
    onBehalfOf: null,
    operation: CONTINUATION_OPERATION,
    crn: null,
    status: 200,
    problem: null,
    access: null,
    issued: null,
    continuation: note,
  };
}
