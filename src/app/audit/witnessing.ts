import type { AuditCheckpoint } from '../../domain/audit/checkpoint.js';
import type { AuditHashes } from '../../ports/audit-hashes.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { WitnessClient } from '../../ports/witnesses.js';
import { withSignatureLines } from '../../tlog/cosignature.js';
import {
  type CheckpointBody,
  checkpointBodyOf,
  type NoteVerifier,
  type NoteVerifierKey,
  openNote,
  verifyWith,
} from '../../tlog/note.js';
import { describeQuorum, type PolicyWitness, quorumMet, type WitnessPolicy } from '../../tlog/policy.js';
import { addCheckpointBody, parseCosignatureLines } from '../../tlog/witness-protocol.js';
import { backgroundInterval, backgroundTimeout } from './background-timers.js';
import { proveConsistency } from './proving.js';
import { cosignedBy } from './witness-policy.js';
import { type TrailBehind, trailBehind, type WitnessStanding } from './witness-standing.js';
import { cosignedNote } from './witnessed.js';

/**
 * Witnessed checkpoints (decisions §19; C2SP tlog-witness v1.0.0): each new checkpoint of the
 * trail is sent to every witness of the policy with a consistency proof from the size that
 * witness last cosigned, and each cosignature that verifies is kept with its checkpoint.
 *
 * Off the request path, as the checkpoints are: `nudge()` after a checkpoint is stored, and a
 * round every `everySeconds` (a checkpoint another instance stored, a witness to try again).
 * Rounds run one at a time; in a round the witnesses are asked at once, each call under its
 * own deadline. The size each witness holds is kept in the store, so a restarted `serve`, or
 * another instance on the same trail, starts from it rather than from a 409.
 *
 * A witness that cannot be reached (no answer in time, a 5xx) is tried again after 1, 2, 4 …
 * seconds, at most `everySeconds`. A witness that refuses (400, 403, 404, 422, a 409 naming a
 * size this trail cannot prove from, a 200 without a cosignature by its key that verifies) is
 * reported as refused: it may have seen another trail, or this one rolled back. Serving never
 * waits for any of it.
 */

export type WitnessOutcome = 'cosigned' | 'conflict' | 'refused' | 'unreachable';

export interface WitnessingOutputs {
  /** One answer of one witness (or a submission this trail refused to make), with what to log. */
  answered(witness: PolicyWitness, outcome: WitnessOutcome, detail: Readonly<Record<string, unknown>>): void;
  /** The newest checkpoint with a note, and whether its verified cosignatures meet the quorum. */
  quorum(newest: AuditCheckpoint, met: boolean, cosignedBy: readonly string[]): void;
  /** A round failed on the store's side (it is tried again). */
  failed(reason: string): void;
  /**
   * A quorum of the witnesses holds what this trail cannot extend (witness-standing.ts): said
   * once, the first time their answers show it; it stays so until `serve` is restarted.
   */
  behind(behind: TrailBehind): void;
}

export interface WitnessingOptions {
  readonly store: AuditLog;
  readonly hashes: AuditHashes;
  readonly policy: WitnessPolicy;
  readonly client: WitnessClient;
  /** The verifier of a cosigner's key (Ed25519 cosignature/v1). */
  readonly cosignerOf: (key: NoteVerifierKey) => NoteVerifier;
  /** Each witness call's deadline. */
  readonly timeoutMs: number;
  /** How often a round runs by itself, and the longest pause before a witness is tried again. */
  readonly everySeconds: number;
  /**
   * The least time between two rounds (ms): checkpoints signed faster than this (a checkpoint
   * every few records under load) are sent as the newest of them, not each one.
   */
  readonly roundGapMs: number;
  readonly out: WitnessingOutputs;
}

const FIRST_RETRY_MS = 1000;
/** The most the last round at shutdown gives each witness: it must end well within the shutdown's grace. */
const LAST_ROUND_MS = 1000;
/** How many 409s one submission follows (each names the size to prove from) before it waits for the next round. */
const MAX_CONFLICTS = 2;

/** A witness's pause after it could not be reached. */
interface Backoff {
  readonly until: number;
  readonly ms: number;
}

export class AuditWitnessing {
  private running: Promise<void> | undefined;
  private again = false;
  /** When the last round began (performance.now() ms). */
  private lastRound = Number.NEGATIVE_INFINITY;
  private stopped = false;
  private interval: ReturnType<typeof setInterval> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** When {@link retry} fires (performance.now() ms). */
  private retryAt = 0;
  private readonly backoff = new Map<string, Backoff>();
  private readonly verifiers = new Map<string, NoteVerifier>();
  /** Each witness's call under way, by its policy name: one at a time per witness. */
  private readonly calling = new Map<string, Promise<void>>();
  /** Aborted at shutdown: every call under way is given up at once. */
  private stopping = new AbortController();
  /** What each witness's last telling answer showed it holds, against this trail. */
  private readonly standings = new Map<string, WitnessStanding>();
  /** Set once a quorum showed the trail behind: it does not go back. */
  private behindFound: TrailBehind | undefined;

  constructor(private readonly options: WitnessingOptions) {}

  /** The quorum of witnesses that showed this trail behind, once one has. */
  get behind(): TrailBehind | undefined {
    return this.behindFound;
  }

  /**
   * Before `serve` listens: asks every witness what it holds, by submitting the newest
   * checkpoint from the size the store says it holds (a 409 names the size it does hold; an
   * equal checkpoint is cosigned again, which changes nothing), each within `timeoutMs`.
   * Resolves with the quorum that holds what this trail cannot extend, if one does. A witness
   * that does not answer shows nothing: it can neither stop the service nor clear it.
   */
  async probe(timeoutMs = this.options.timeoutMs): Promise<TrailBehind | undefined> {
    const { store, policy } = this.options;
    const newest = await store.newestCheckpoint({ withNote: true });
    if (newest?.note === undefined) return undefined;
    const checkpoint = { ...newest, note: newest.note };
    const body = checkpointBodyOf(checkpoint.note);
    if ('invalid' in body)
      throw new Error(`the newest checkpoint's note is not a checkpoint: ${body.invalid}`);
    const [sizes, treeSize] = await Promise.all([store.witnessSizes(), store.treeSize()]);
    await Promise.all(
      policy.witnesses.map((w) =>
        this.submit(w, checkpoint, body, sizes.get(w.vkey) ?? 0, treeSize, timeoutMs),
      ),
    );
    return this.behindFound;
  }

  /** What `witness`'s answer showed it holds; the trail found behind once a quorum shows it. */
  private stands(witness: PolicyWitness, standing: WitnessStanding, treeSize: number): void {
    this.standings.set(witness.name, standing);
    if (this.behindFound !== undefined || standing.kind === 'consistent') return;
    this.behindFound = trailBehind(this.options.policy, this.standings, treeSize);
    if (this.behindFound !== undefined) this.options.out.behind(this.behindFound);
  }

  /** Starts the round timer (unreferenced) and runs a first round: the newest checkpoint may lack cosignatures. */
  start(): void {
    this.interval = backgroundInterval(() => void this.nudge(), this.options.everySeconds * 1000);
    void this.nudge();
  }

  /**
   * Runs a round (a call while one runs runs one more after it); resolves once it has sent the
   * newest checkpoint to the witnesses due, not once they answered ({@link settled}).
   */
  nudge(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    // At most one round every `roundGapMs`: a witness needs the newest checkpoint, not each one.
    const wait = this.lastRound + this.options.roundGapMs - performance.now();
    if (wait > 0) {
      this.scheduleRetry(wait);
      return Promise.resolve();
    }
    this.lastRound = performance.now();
    this.running = (async () => {
      try {
        await this.round();
      } catch (error) {
        this.options.out.failed((error as Error).message);
      }
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.nudge();
      }
    })();
    return this.running;
  }

  /**
   * Shutdown: no new round, and the calls under way given up. With `last`, one more round,
   * each witness given at most a second: the checkpoint taken at shutdown is the newest, and
   * `audit verify --policy` wants it witnessed (a witness that misses it gets it at the next start).
   */
  async stop({ last = false }: { readonly last?: boolean } = {}): Promise<void> {
    this.stopped = true;
    clearInterval(this.interval);
    clearTimeout(this.retry);
    this.stopping.abort();
    await this.settled();
    if (!last) return;
    this.stopping = new AbortController();
    this.backoff.clear();
    try {
      await this.round(Math.min(this.options.timeoutMs, LAST_ROUND_MS));
    } catch (error) {
      this.options.out.failed((error as Error).message);
    }
    await this.settled();
  }

  /** The policy witnesses whose cosignature lines kept with `checkpoint` verify. */
  private cosignersOf(checkpoint: AuditCheckpoint & { note: string }): readonly string[] {
    if ((checkpoint.cosignatures ?? []).length === 0) return [];
    return cosignedBy(cosignedNote(checkpoint), this.options.policy, (key) => this.verifierOf(key)).witnesses;
  }

  /** The verifier of a policy witness's key, made once. */
  private verifierOf(key: NoteVerifierKey): NoteVerifier {
    const held = this.verifiers.get(key.name + key.keyId);
    if (held !== undefined) return held;
    const made = this.options.cosignerOf(key);
    this.verifiers.set(key.name + key.keyId, made);
    return made;
  }

  /** The lines among `lines` that are `witness`'s cosignatures of the checkpoint `note` and verify. */
  private verifiedLines(note: string, lines: readonly string[], witness: PolicyWitness): string[] {
    const verifier = this.verifierOf(witness.key);
    return lines.filter((line) => {
      const opened = openNote(withSignatureLines(note, [line]), [verifier], verifyWith([verifier]));
      return opened.ok;
    });
  }

  /**
   * A round: the newest checkpoint read, its quorum reported, and each witness that has not
   * cosigned it, is not pausing and has no call under way sent it. A witness's calls run on
   * their own: one that hangs holds up no other, nor the next round.
   */
  private async round(timeoutMs = this.options.timeoutMs): Promise<void> {
    const { store, policy, out } = this.options;
    const newest = await store.newestCheckpoint({ withNote: true });
    if (newest?.note === undefined) return;
    const checkpoint = { ...newest, note: newest.note };
    const body = checkpointBodyOf(checkpoint.note);
    if ('invalid' in body)
      throw new Error(`the newest checkpoint's note is not a checkpoint: ${body.invalid}`);
    const cosigned = new Set(this.cosignersOf(checkpoint));
    out.quorum(checkpoint, quorumMet(policy.quorum, cosigned), [...cosigned]);
    const now = performance.now();
    const due = policy.witnesses.filter(
      (w) =>
        !cosigned.has(w.name) && !this.calling.has(w.name) && (this.backoff.get(w.name)?.until ?? 0) <= now,
    );
    if (due.length === 0) return;
    const [sizes, treeSize] = await Promise.all([store.witnessSizes(), store.treeSize()]);
    for (const witness of due) {
      const call = this.submit(witness, checkpoint, body, sizes.get(witness.vkey) ?? 0, treeSize, timeoutMs)
        .then((cosignedNow) => (cosignedNow ? this.reportQuorum() : undefined))
        .catch((error: unknown) => out.failed((error as Error).message))
        .finally(() => this.calling.delete(witness.name));
      this.calling.set(witness.name, call);
    }
    // The round ends now: the next one need not wait for a witness that is slow to answer.
  }

  /** The quorum of the newest checkpoint as stored now (after a cosignature was kept). */
  private async reportQuorum(): Promise<void> {
    const { store, policy, out } = this.options;
    const newest = await store.newestCheckpoint({ withNote: true });
    if (newest?.note === undefined) return;
    const names = this.cosignersOf({ ...newest, note: newest.note });
    out.quorum(newest, quorumMet(policy.quorum, new Set(names)), names);
  }

  /** Resolves once every witness call under way has ended. */
  async settled(): Promise<void> {
    await this.running;
    await Promise.all(this.calling.values());
  }

  /** Submits `checkpoint` to `witness`, which holds `held`; true when it cosigned. */
  private async submit(
    witness: PolicyWitness,
    checkpoint: AuditCheckpoint & { note: string },
    body: CheckpointBody,
    held: number,
    treeSize: number,
    timeoutMs: number,
    conflicts = 0,
  ): Promise<boolean> {
    const { store, hashes, client, out } = this.options;
    const refused = (detail: Record<string, unknown>) => {
      out.answered(witness, 'refused', { size: body.size, ...detail });
      return false;
    };
    if (held > body.size) {
      // The witness holds a larger tree than this checkpoint's: past this trail's own tree, the
      // trail was rolled back or the witness saw another one; within it, a newer checkpoint will come.
      // The tree as it is now: another instance on the same trail may have grown it, and had
      // the witness cosign that, since this round read it.
      const now = held > treeSize ? await store.treeSize() : treeSize;
      if (held > now) {
        this.stands(witness, { kind: 'ahead', holds: held }, now);
        return refused({
          holds: held,
          reason: `the witness holds ${held} records, more than this trail's tree (${now}): the trail was rolled back, or the witness cosigned another trail`,
        });
      }
      return false;
    }
    let proof: Awaited<ReturnType<typeof proveConsistency>> = [];
    if (held > 0) {
      try {
        proof = await proveConsistency(hashes, store, held, body.size, body);
      } catch (error) {
        return refused({
          holds: held,
          reason: `no consistency proof from ${held} records: ${(error as Error).message}`,
        });
      }
    }
    const answer = await client.addCheckpoint(
      witness.url ?? '',
      addCheckpointBody(held, proof, checkpoint.note),
      AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopping.signal]),
    );
    switch (answer.kind) {
      case 'cosigned': {
        const lines = parseCosignatureLines(answer.body);
        const valid = 'invalid' in lines ? [] : this.verifiedLines(checkpoint.note, lines, witness);
        if (valid.length === 0)
          return refused({
            status: 200,
            reason: 'it answered without a cosignature by its key that verifies',
          });
        await store.addCosignatures(checkpoint, valid);
        await store.saveWitnessSize(witness.vkey, body.size);
        this.stands(witness, { kind: 'consistent', holds: body.size }, treeSize);
        this.backoff.delete(witness.name);
        out.answered(witness, 'cosigned', { size: body.size, from: held });
        return true;
      }
      case 'conflict': {
        await store.saveWitnessSize(witness.vkey, answer.size);
        if (answer.size === held)
          return refused({
            status: 409,
            reason: `it answered 409 naming the size sent (${held})`,
            from: held,
          });
        out.answered(witness, 'conflict', { size: body.size, sent: held, holds: answer.size });
        if (conflicts >= MAX_CONFLICTS) return false;
        return this.submit(witness, checkpoint, body, answer.size, treeSize, timeoutMs, conflicts + 1);
      }
      case 'refused':
        // A 422: the witness holds `held` records of a tree no proof from this one reaches.
        if (answer.status === 422) this.stands(witness, { kind: 'forked', holds: held }, treeSize);
        return refused({ status: answer.status, answer: answer.detail, from: held });
      case 'unreachable': {
        const ms = Math.min(
          (this.backoff.get(witness.name)?.ms ?? FIRST_RETRY_MS / 2) * 2,
          this.options.everySeconds * 1000,
        );
        this.backoff.set(witness.name, { until: performance.now() + ms, ms });
        this.scheduleRetry(ms);
        out.answered(witness, 'unreachable', { size: body.size, reason: answer.reason, retryInMs: ms });
        return false;
      }
    }
  }

  /** A round in `ms` (or sooner, when one is due sooner already). */
  private scheduleRetry(ms: number): void {
    if (this.stopped) return;
    const at = performance.now() + ms;
    if (this.retry !== undefined && this.retryAt <= at) return;
    clearTimeout(this.retry);
    this.retryAt = at;
    this.retry = backgroundTimeout(() => {
      this.retry = undefined;
      void this.nudge();
    }, ms);
  }

  /** The quorum in words, for messages. */
  get quorumText(): string {
    return describeQuorum(this.options.policy.quorum);
  }
}
