// `audit prove` (decisions §14): which proof its options ask for, records in the tree
// (prove-inclusion.ts) or the tree extending an older one (prove-consistency.ts), options that
// go with the other refused.
import { UsageError } from '../exit.js';
import type { Io } from '../io.js';
import { type ArchiveGiven, type PolicyGiven, type StoreGiven, wholeOption } from './options.js';
import { proveConsistencyAsked } from './prove-consistency.js';
import { proveRecords } from './prove-inclusion.js';

/** What `audit prove` is given: the store or an archive, a policy, and which proof. */
export interface ProveGiven extends StoreGiven, ArchiveGiven, PolicyGiven {
  readonly seq?: string | undefined;
  readonly out?: string | undefined;
  readonly consistency?: string | undefined;
  readonly size?: string | undefined;
}

/**
 * `audit prove REQUEST_ID | --seq N --out DIR`: each record's entry and its tlog-proof against
 * the newest checkpoint of the tree (with `--archive DIR`, against the archive's checkpoint,
 * from its tiles); `audit prove --consistency OLD [--size NEW]`: the
 * consistency proof's hashes. Every proof is checked against the signed root before it is written.
 */
export async function prove(requestId: string | undefined, values: ProveGiven, io: Io): Promise<number> {
  if (values.consistency !== undefined) {
    // The consistency proof is of the tree, not of a record.
    if (requestId !== undefined) throw new UsageError(`unexpected argument: ${requestId}`);
    if (values.seq !== undefined || values.out !== undefined) {
      throw new UsageError('--consistency takes no --seq or --out: it writes the proof to stdout');
    }
    if (values.policy !== undefined) {
      throw new UsageError(
        "--policy goes with a record's proof: a consistency proof's hashes carry no checkpoint to witness",
      );
    }
    const oldSize = wholeOption('--consistency', values.consistency);
    const newSize = values.size === undefined ? undefined : wholeOption('--size', values.size);
    return proveConsistencyAsked(oldSize, newSize, values, io);
  }
  if (values.size !== undefined) throw new UsageError('--size goes with --consistency');
  if ((requestId === undefined) === (values.seq === undefined)) {
    throw new UsageError('audit prove needs a REQUEST_ID or --seq N (one of them)');
  }
  if (values.out === undefined) throw new UsageError('audit prove needs --out DIR');
  const out = values.out;
  const seq = values.seq === undefined ? undefined : wholeOption('--seq', values.seq);
  return proveRecords({ requestId, seq, out }, values, io);
}
