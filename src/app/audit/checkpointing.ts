import { type AuditCheckpoint, type ChainHead, signCheckpoint } from '../../domain/audit/checkpoint.js';
import type { AuditCheckpointStore, AuditTree } from '../../ports/audit-log.js';
import type { CheckpointSigner } from '../../ports/checkpoint-keys.js';
import { sameHash } from '../../tlog/merkle.js';
import {
  checkpointBodyOf,
  checkpointText,
  signatureLineParts,
  signatureLinesOf,
  signNote,
} from '../../tlog/note.js';
import { backgroundInterval, backgroundTimeout } from './background-timers.js';

/**
 * Signed checkpoints of the audit chain, taken by `serve` (decisions §9, §14), each with the
 * tree's checkpoint note, the tree grown first: every
 * `everyRecords` records this instance appended, every `everySeconds` seconds when the chain
 * has grown since the newest stored checkpoint (whoever made it), and at shutdown.
 *
 * Off the request path: a request's `appended()` only counts; the checkpoint itself is read,
 * signed and stored afterwards, one at a time. A checkpoint is logged as soon as it is
 * signed, so a copy is wherever the logs go even if the store refuses it; one that cannot be
 * stored is reported and tried again (after 1, 2, 4 … seconds, at most `everySeconds`),
 * never turned into a failed request.
 */

export interface CheckpointingOutputs {
  /** A checkpoint was signed: the log line `"msg":"audit checkpoint"`. */
  signed(checkpoint: AuditCheckpoint): void;
  /** What the store holds now: its head and newest checkpoint (the metrics). */
  observed(head: ChainHead, newest: AuditCheckpoint | undefined): void;
  /** A checkpoint was stored: what witnesses are sent (decisions §19). */
  stored?(checkpoint: AuditCheckpoint): void;
  /** A checkpoint could not be taken or stored; it will be tried again. */
  failed(reason: string): void;
  /** The stored chain ends before its newest checkpoint: records were removed. */
  contradicted(head: ChainHead, newest: AuditCheckpoint): void;
}

export interface CheckpointingOptions {
  readonly store: AuditCheckpointStore & Pick<AuditTree, 'growTree'> & { flush(): Promise<void> };
  readonly signer: CheckpointSigner;
  readonly everyRecords: number;
  readonly everySeconds: number;
  readonly now: () => Date;
  readonly out: CheckpointingOutputs;
}

const FIRST_RETRY_MS = 1000;

export class AuditCheckpointing {
  private appendedSince = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private interval: ReturnType<typeof setInterval> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private retryMs = FIRST_RETRY_MS;

  constructor(private readonly options: CheckpointingOptions) {}

  /** Starts the timer (unreferenced: it never keeps the process alive) and reads the store's state once. */
  start(): void {
    this.interval = backgroundInterval(() => void this.checkpoint(), this.options.everySeconds * 1000);
    void this.checkpoint();
  }

  /** One record of this instance goes to the store: counted, and a checkpoint started when enough have. */
  appended(): void {
    if (this.stopped) return;
    this.appendedSince++;
    if (this.appendedSince >= this.options.everyRecords) {
      this.appendedSince = 0;
      void this.checkpoint();
    }
  }

  /** Takes a checkpoint if the chain has grown; one at a time (a call meanwhile runs once more after). */
  checkpoint(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.attempt();
      } while (this.again && !this.stopped);
      this.running = undefined;
    })();
    return this.running;
  }

  /**
   * The newest checkpoint made one this instance's key has signed, covering the chain's head
   * (decisions §23): a new one when the chain has grown; and when it has not since a
   * checkpoint another key signed (the key was rotated, and nothing was appended since), this
   * key's signature of that same tree added to it, as a further signature line of its note
   * (kept as its cosignatures are). The tree's root is the one the store makes now, which must
   * be the one signed: a stored tree that is not is refused, never signed again. A checkpoint
   * this key signed already, or one already bearing its signature, is left as it is.
   */
  async checkpointUnderThisKey(): Promise<void> {
    await this.checkpoint();
    const { store, signer } = this.options;
    const newest = await store.newestCheckpoint({ withNote: true });
    if (newest?.note === undefined || newest.keyId === signer.keyId) return;
    const key = signer.note;
    const lines = [...signatureLinesOf(newest.note), ...(newest.cosignatures ?? [])];
    if (
      lines.some(
        (line) =>
          signatureLineParts(line)?.name === key.name && signatureLineParts(line)?.keyId === key.keyId,
      )
    ) {
      return;
    }
    const signed = checkpointBodyOf(newest.note);
    if ('invalid' in signed)
      throw new Error(`the newest checkpoint's note is not a checkpoint: ${signed.invalid}`);
    const grown = await store.growTree();
    // Grown since (another instance appended): the next checkpoint will be this key's.
    if (grown.size !== signed.size) return this.checkpoint();
    if (grown.root === undefined || !sameHash(grown.root, signed.root)) {
      throw new Error(
        `the stored tree of ${signed.size} records is not the one its newest checkpoint signs: it is not signed again; run case-read audit verify`,
      );
    }
    const own = signatureLinesOf(signNote(checkpointText(key.name, signed.size, signed.root), key)).at(-1);
    if (own !== undefined) await store.addCosignatures(newest, [own]);
  }

  /** Shutdown: the timers stop, every pending record is written, and a last checkpoint is taken. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.interval);
    clearTimeout(this.retry);
    await this.running;
    await this.options.store.flush().catch(() => {});
    await this.attempt();
  }

  private async attempt(): Promise<void> {
    const { store, signer, out } = this.options;
    try {
      const [head, newest] = await Promise.all([store.head(), store.newestCheckpoint()]);
      out.observed(head, newest);
      if (newest !== undefined && newest.seq > head.seq) out.contradicted(head, newest);
      if (head.seq === 0 || newest?.seq === head.seq) return this.succeeded();
      // The trail went on under another origin (`audit continue`) while this instance ran: it
      // signs no more, as it would not start (decisions §18).
      const named = newest?.note === undefined ? undefined : checkpointBodyOf(newest.note);
      if (named !== undefined && !('invalid' in named) && named.origin !== signer.note.name)
        throw new Error(
          `the trail's newest checkpoint names the log ${named.origin}, not ${signer.note.name}: the trail was continued under a new origin; this instance signs nothing more (restart it with AUDIT_ORIGIN=${named.origin})`,
        );
      // The tree catches up with the records first: the checkpoint signs the chain's head
      // and the tree's root at one size, the tree's.
      const grown = await store.growTree();
      if (grown.root === undefined || newest?.seq === grown.size) return this.succeeded();
      const checkpoint = signCheckpoint(grown.head, this.options.now(), signer, grown.root);
      out.signed(checkpoint);
      await store.saveCheckpoint(checkpoint);
      out.observed(head, checkpoint);
      out.stored?.(checkpoint);
      this.succeeded();
    } catch (error) {
      out.failed((error as Error).message);
      if (!this.stopped && this.retry === undefined) {
        const delay = Math.min(this.retryMs, this.options.everySeconds * 1000);
        this.retryMs *= 2;
        this.retry = backgroundTimeout(() => {
          this.retry = undefined;
          void this.checkpoint();
        }, delay);
      }
    }
  }

  private succeeded(): void {
    this.retryMs = FIRST_RETRY_MS;
  }
}
