import type { AuditCheckpoint } from '../../domain/audit/checkpoint.js';
import type { AuditCheckpointStore } from '../../ports/audit-log.js';
import { withSignatureLines } from '../../tlog/cosignature.js';
import {
  type CheckpointBody,
  type NoteVerifier,
  type NoteVerifierKey,
  signatureLineParts,
} from '../../tlog/note.js';
import { describeQuorum, quorumMet, type WitnessPolicy } from '../../tlog/policy.js';
import { cosignedBy, policyProblems } from './witness-policy.js';

/**
 * Checkpoints read against a witness policy (decisions §19): what `audit verify --policy`,
 * `audit verify-proof --policy`, `audit prove --policy` and `audit checkpoints --policy` share.
 * A checkpoint is witnessed when the policy witnesses whose cosignatures verify meet the
 * policy's quorum and no policy witness's cosignature fails; the newest witnessed checkpoint of
 * a trail is found in one pass over its checkpoints, the signatures checked only of the newest
 * and of the last few whose cosignature lines name the quorum's witnesses. Ed25519 is handed in
 * (the cosigner keys' verifier, and the log's keys).
 */

/** A policy as a command checks checkpoints against it. */
export interface PolicyCheck {
  readonly policy: WitnessPolicy;
  /** A witness's key as a verifier of its cosignatures (cosigner-keys' cosignerVerifier). */
  readonly verifierOf: (key: NoteVerifierKey) => NoteVerifier;
  /** Where the policy came from, for messages: `--policy FILE`. */
  readonly source: string;
}

/** A checkpoint the policy does not accept, or a policy that is not this trail's: the message says which and why. */
export class WitnessPolicyError extends Error {
  override readonly name = 'WitnessPolicyError';
}

/** How one checkpoint stands against the policy. */
export interface Witnessing {
  /** The policy names of the witnesses whose cosignature on it verifies. */
  readonly witnesses: readonly string[];
  /** Whether they meet the quorum, no policy witness's cosignature failing. */
  readonly met: boolean;
  /** Why it is refused whatever the quorum: a policy witness's cosignature that does not verify. */
  readonly refused?: string;
}

/** How `note` (a signed checkpoint note with its cosignature lines) stands against the policy. */
export function witnessingOf(note: string, check: PolicyCheck): Witnessing {
  const cosigned = cosignedBy(note, check.policy, check.verifierOf);
  const refused =
    cosigned.malformed !== undefined
      ? `it is not a signed note: ${cosigned.malformed}`
      : cosigned.refused !== undefined
        ? `the cosignature of witness ${cosigned.refused} does not verify: it was forged, or the checkpoint was changed after it was cosigned`
        : undefined;
  return {
    witnesses: cosigned.witnesses,
    met: refused === undefined && quorumMet(check.policy.quorum, new Set(cosigned.witnesses)),
    ...(refused === undefined ? {} : { refused }),
  };
}

/** The quorum in words, as messages name it: `the quorum 2 of (w1, w2, w3) of --policy FILE`. */
export const quorumOf = (check: PolicyCheck): string =>
  `the quorum ${describeQuorum(check.policy.quorum)} of ${check.source}`;

/** The witnesses named, or that none of the policy's did. */
export const witnessList = (witnesses: readonly string[]): string =>
  witnesses.length === 0 ? 'no witness of the policy' : witnesses.join(', ');

/**
 * The checkpoint's signed note as a reader is handed it: the log's signature followed by every
 * cosignature line kept with it (C2SP: a cosignature is one more signature line of the note).
 */
export function cosignedNote(checkpoint: AuditCheckpoint & { readonly note: string }): string {
  return withSignatureLines(checkpoint.note, checkpoint.cosignatures ?? []);
}

/** The key names the cosignature lines held with a checkpoint are signed under, each once, in order. */
export function cosignerNames(lines: readonly string[] | undefined): string[] {
  const names = (lines ?? [])
    .map((line) => signatureLineParts(line)?.name)
    .filter((name) => name !== undefined);
  return [...new Set(names)];
}

/**
 * Refuses a policy that is not this trail's (as `serve` refuses it): one of `keys` (the log's
 * keys as given: its origin and key) must be a `log` line of it, and no `log` line may name
 * the origin with another key only. The message names the policy and the line.
 */
export function requireTrailLog(check: PolicyCheck, keys: readonly NoteVerifierKey[]): void {
  let first: readonly string[] = [];
  for (const key of keys) {
    const problems = policyProblems(check.policy, {
      origin: key.name,
      logVkey: key,
      // The witnesses' URLs are for submitting checkpoints: a reader offline never calls them.
      isLoopback: () => true,
    });
    if (problems.length === 0) return;
    if (first.length === 0) first = problems;
  }
  throw new WitnessPolicyError(`${check.source} is not this trail's policy: ${first.join('; ')}`);
}

/**
 * The policy's `log` keys for the log `origin`, as verifiers (made by `verifierOf`, the log's
 * Ed25519): what a command that was given no key of the log opens its checkpoints with. A
 * policy with no `log` line for the origin is refused, naming it.
 */
export function policyLogKeys<K extends NoteVerifier>(
  check: PolicyCheck,
  origin: string,
  verifierOf: (key: NoteVerifierKey) => K,
): K[] {
  const problems = policyProblems(check.policy, { origin, isLoopback: () => true });
  if (problems.length > 0)
    throw new WitnessPolicyError(`${check.source} is not this trail's policy: ${problems.join('; ')}`);
  return check.policy.logs.filter((log) => log.key.name === origin).map((log) => verifierOf(log.key));
}

/** A stored checkpoint with its note, as the policy found it. */
export interface WitnessedCheckpoint {
  readonly checkpoint: AuditCheckpoint;
  /** The tree it signs, once its note was opened with the log's keys. */
  readonly body: CheckpointBody;
  /** Its note with every cosignature line held. */
  readonly note: string;
  readonly witnessing: Witnessing;
}

/** Opens a checkpoint note with the log's keys (proving.ts openCheckpoint, say); throws when it cannot be. */
export type OpenNote = (note: string, what: string) => CheckpointBody;

/** The policy witnesses whose key (name and key id) signs one of `lines`, their signatures unchecked. */
function witnessesNamedIn(policy: WitnessPolicy, lines: readonly string[] | undefined): Set<string> {
  const signers = new Set(
    (lines ?? []).map((line) => {
      const parts = signatureLineParts(line);
      return parts === undefined ? '' : `${parts.name} ${parts.keyId}`;
    }),
  );
  return new Set(
    policy.witnesses
      .filter((witness) => signers.has(`${witness.key.name} ${witness.key.keyId}`))
      .map((witness) => witness.name),
  );
}

const described = (c: AuditCheckpoint) => `checkpoint at seq ${c.seq} (${c.time})`;

/** A stored checkpoint with a note, opened with the log's keys and checked against the policy. */
function witnessed(
  checkpoint: AuditCheckpoint & { readonly note: string },
  check: PolicyCheck,
  open: OpenNote,
): WitnessedCheckpoint {
  const body = open(checkpoint.note, `the store's ${described(checkpoint)}`);
  const note = cosignedNote(checkpoint);
  return { checkpoint, body, note, witnessing: witnessingOf(note, check) };
}

/** What {@link witnessedCheckpoints} found. */
export interface TrailWitnessing {
  /** The newest stored checkpoint with a note, and how it stands; undefined when there is none. */
  readonly newest?: WitnessedCheckpoint;
  /** The newest stored checkpoint that meets the quorum, checked; undefined when none did. */
  readonly met?: WitnessedCheckpoint;
  /**
   * A checkpoint newer than `met` whose cosignature lines name the quorum's witnesses but one
   * of them does not verify (the newest such): a forged or changed cosignature in the store.
   */
  readonly refused?: WitnessedCheckpoint;
}

/** How many checkpoints naming the quorum's witnesses are kept to check, newest last, when the newest is refused. */
const CANDIDATES = 16;

/**
 * The trail's newest checkpoint and its newest witnessed one, in one pass over the stored
 * checkpoints: each one's cosignature lines are only looked at by name and key id on the way
 * (so a trail of many checkpoints costs no signature checks), and the cosignatures of the last
 * few that name the quorum's witnesses checked after, newest first, with the log's signature
 * (`open`). A stored checkpoint that cannot be read is thrown, made by `invalid`.
 */
export async function witnessedCheckpoints(
  store: Pick<AuditCheckpointStore, 'checkpoints'>,
  check: PolicyCheck,
  open: OpenNote,
  invalid: (reason: string) => Error,
): Promise<TrailWitnessing> {
  let newest: (AuditCheckpoint & { readonly note: string }) | undefined;
  const candidates: (AuditCheckpoint & { readonly note: string })[] = [];
  for await (const read of store.checkpoints()) {
    if ('invalid' in read) throw invalid(read.invalid);
    if (read.note === undefined) continue;
    const noted = read as AuditCheckpoint & { readonly note: string };
    // Lowest seq first: the last one seen is the newest. (Two at one seq: the later stored.)
    newest = noted;
    if (quorumMet(check.policy.quorum, witnessesNamedIn(check.policy, read.cosignatures))) {
      candidates.push(noted);
      if (candidates.length > CANDIDATES) candidates.shift();
    }
  }
  if (newest === undefined) return {};
  const found = witnessed(newest, check, open);
  let refused: WitnessedCheckpoint | undefined;
  for (const candidate of candidates.reverse()) {
    const checked = candidate === newest ? found : witnessed(candidate, check, open);
    if (checked.witnessing.met) return { newest: found, met: checked, ...(refused ? { refused } : {}) };
    refused ??= checked;
  }
  return { newest: found, ...(refused ? { refused } : {}) };
}

/** How long ago `time` (ISO 8601) was, in words: `40 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function ageOf(time: string, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - Date.parse(time)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * Why the trail's newest checkpoint is not witnessed, for the operator: the quorum, who did
 * cosign it, and the size and age of the newest checkpoint that met the quorum (or that none
 * ever did). Undefined when it is witnessed.
 */
export function notWitnessedReason(
  found: TrailWitnessing,
  check: PolicyCheck,
  now: Date,
): string | undefined {
  const { newest } = found;
  if (newest === undefined)
    return `the store holds no checkpoint of the tree: nothing meets ${quorumOf(check)}`;
  if (newest.witnessing.met) return undefined;
  const head = `the newest checkpoint (${newest.body.size} records, seq ${newest.checkpoint.seq}, ${newest.checkpoint.time})`;
  const why =
    newest.witnessing.refused !== undefined
      ? `${head} is refused: ${newest.witnessing.refused}`
      : `${head} does not meet ${quorumOf(check)}: cosigned by ${witnessList(newest.witnessing.witnesses)}`;
  const refused =
    found.refused !== undefined && found.refused !== newest
      ? [
          `; a newer one than any that met it is refused (${found.refused.body.size} records, seq ${found.refused.checkpoint.seq}): ${found.refused.witnessing.refused}`,
        ]
      : [];
  return `${why}${refused.join('')}; ${lastWitnessed(found.met, now)}`;
}

/** The newest checkpoint that met the quorum, in words (its size and age), or that none did. */
export function lastWitnessed(met: WitnessedCheckpoint | undefined, now: Date): string {
  if (met === undefined) return 'no checkpoint of this trail ever met it';
  const { body, checkpoint, witnessing } = met;
  return `the newest checkpoint that met it: ${body.size} records, signed ${checkpoint.time}, ${ageOf(checkpoint.time, now)} ago, cosigned by ${witnessList(witnessing.witnesses)}`;
}
