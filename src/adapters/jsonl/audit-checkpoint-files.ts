// The JSONL audit trail's signed checkpoints as its store keeps them: the checkpoint file and
// the witness file beside the trail, read once, then kept up to date by its one writer.
import {
  type AuditCheckpoint,
  checkpointIdOf,
  describeCheckpoint,
  mergeCosignatures,
} from '../../domain/audit/checkpoint.js';
import type { StoreLog } from '../../ports/stores.js';
import { witnessSizeProblem } from '../shared/audit-witnesses.js';
import {
  appendCheckpoint,
  checkpointPathOf,
  checkpointsOf,
  type HeldCheckpoints,
  hold,
} from './audit-checkpoints.js';
import { cutUnfinishedLine, JsonlAuditStoreError } from './audit-format.js';
import {
  appendCosigned,
  appendWitnessSize,
  readWitnessFile,
  type WitnessFile,
  withCosignatures,
  witnessPathOf,
} from './audit-witnesses.js';

/**
 * The trail's checkpoints (`PATH.checkpoints`, one JSON line each, audit-checkpoints.ts) and
 * the witnesses' cosignatures of them and each witness's size (`PATH.witnesses`,
 * audit-witnesses.ts). Only the trail's writer appends to them; it is the caller's to say that
 * this is the writer.
 */
export class CheckpointFiles {
  /**
   * The checkpoint file as this writer knows it, once read (it is the only writer): the
   * highest checkpoint, and every one's signature, so a checkpoint given twice is kept once.
   */
  private held: HeldCheckpoints | undefined;
  /** The witness file as this store knows it, once read (the writer keeps it as it appends). */
  private witnesses: WitnessFile | undefined;

  /** `path`: the trail's. */
  constructor(private readonly path: string) {}

  /**
   * For the writer, on opening: the witness file's unfinished last line (a write cut short by
   * the machine stopping) is cut off, and logged, so the next line is not written onto it.
   */
  cutUnfinished(log: StoreLog | undefined): void {
    const cut = cutUnfinishedLine(witnessPathOf(this.path));
    if (cut > 0) {
      log?.(
        'warn',
        { store: 'audit', path: witnessPathOf(this.path), bytes: cut },
        'the witness file ended in an unfinished line; it was cut off',
      );
    }
  }

  /**
   * Appends the checkpoint's line to `PATH.checkpoints`; a line that cannot be written whole
   * is cut off again. The newest checkpoint given again (a retry) is not written twice.
   */
  async save(checkpoint: AuditCheckpoint): Promise<void> {
    const held = await this.heldCheckpoints();
    if (!held.signatures.has(checkpointIdOf(checkpoint))) {
      appendCheckpoint(checkpointPathOf(this.path), checkpoint);
      const { cosignatures: _added, ...bare } = checkpoint;
      hold(held, bare);
    }
    if (checkpoint.cosignatures?.length) await this.addCosignatures(checkpoint, checkpoint.cosignatures);
  }

  /**
   * The newest checkpoint (with `withNote`, the newest that carries a note), with the
   * cosignatures the witness file holds for it; when those are not well formed, without them
   * (`checkpoints` names the line).
   */
  async newest(options?: { readonly withNote?: boolean }): Promise<AuditCheckpoint | undefined> {
    const held = await this.heldCheckpoints();
    const newest = options?.withNote ? held.newestNoted : held.newest;
    if (newest === undefined) return undefined;
    const read = withCosignatures(newest, await this.witnessFile());
    return 'invalid' in read ? newest : read;
  }

  /**
   * Appends the lines the checkpoint does not hold yet to `PATH.witnesses`, in one line (cut
   * off again if it cannot be written whole). The checkpoint must be in the checkpoint file.
   */
  async addCosignatures(checkpoint: AuditCheckpoint, lines: readonly string[]): Promise<void> {
    const id = checkpointIdOf(checkpoint);
    if (!(await this.heldCheckpoints()).signatures.has(id)) {
      throw new JsonlAuditStoreError(
        `cannot add cosignatures to the ${describeCheckpoint(checkpoint)}: it is not stored in ${checkpointPathOf(this.path)}`,
      );
    }
    const file = await this.witnessFile();
    const held = file.cosigned.get(id);
    const merged = mergeCosignatures(held?.lines, lines);
    if ('invalid' in merged) {
      throw new JsonlAuditStoreError(
        `cannot add cosignatures to the ${describeCheckpoint(checkpoint)}: ${merged.invalid}`,
      );
    }
    if (merged.fresh.length === 0) return;
    appendCosigned(witnessPathOf(this.path), checkpoint, merged.fresh);
    if (held === undefined) file.cosigned.set(id, { lines: merged.lines, line: 0 });
    else held.lines = merged.lines;
  }

  async witnessSizes(): Promise<ReadonlyMap<string, number>> {
    return new Map((await this.witnessFile()).sizes);
  }

  /** Appends the witness's size to `PATH.witnesses`, unless it is the size already recorded. */
  async saveWitnessSize(vkey: string, size: number): Promise<void> {
    const problem = witnessSizeProblem(vkey, size);
    if (problem !== undefined) throw new JsonlAuditStoreError(problem);
    const file = await this.witnessFile();
    if (file.sizes.get(vkey) === size) return;
    appendWitnessSize(witnessPathOf(this.path), vkey, size, new Date());
    file.sizes.set(vkey, size);
  }

  private async witnessFile(): Promise<WitnessFile> {
    this.witnesses ??= await readWitnessFile(witnessPathOf(this.path));
    return this.witnesses;
  }

  private async heldCheckpoints(): Promise<HeldCheckpoints> {
    if (this.held === undefined) {
      const held: HeldCheckpoints = { newest: undefined, newestNoted: undefined, signatures: new Set() };
      for await (const c of checkpointsOf(checkpointPathOf(this.path))) if (!('invalid' in c)) hold(held, c);
      this.held = held;
    }
    return this.held;
  }

  /**
   * The checkpoint file's lines, in the order written (which is seq order: one writer), each
   * with its cosignatures from the witness file. That file is read first, so every checkpoint
   * it names is in the checkpoint file read after it; then, after the checkpoints, each of its
   * lines that is not a well-formed event, and each cosigning a checkpoint the checkpoint file
   * does not hold, comes as `{ invalid }`.
   */
  async *checkpoints(): AsyncGenerator<AuditCheckpoint | { readonly invalid: string }> {
    const file = witnessPathOf(this.path);
    const witnesses = await readWitnessFile(file);
    const found = new Set<string>();
    for await (const read of checkpointsOf(checkpointPathOf(this.path))) {
      if ('invalid' in read) {
        yield read;
        continue;
      }
      found.add(checkpointIdOf(read));
      const cosigned = withCosignatures(read, witnesses);
      yield 'invalid' in cosigned
        ? { invalid: `the cosignatures in ${file} of the ${describeCheckpoint(read)}: ${cosigned.invalid}` }
        : cosigned;
    }
    for (const invalid of witnesses.invalid) yield { invalid };
    for (const [id, { line }] of witnesses.cosigned) {
      if (!found.has(id))
        yield {
          invalid: `line ${line} of ${file} cosigns a checkpoint ${checkpointPathOf(this.path)} does not hold`,
        };
    }
  }
}
