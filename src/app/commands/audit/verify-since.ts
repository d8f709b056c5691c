// `audit verify --since` (decisions §14, §19): the store's newest checkpoint shown to extend a
// checkpoint saved earlier, the records since it walked, and with a policy the newest checkpoint
// cosigned by its quorum.
import {
  AuditProofError,
  newestNoted,
  type OpenedCheckpoint,
  openCheckpoint,
  verifySince,
} from '../../audit/proving.js';
import {
  cosignedNote,
  lastWitnessed,
  notWitnessedReason,
  quorumOf,
  witnessedCheckpoints,
  witnessingOf,
  witnessList,
} from '../../audit/witnessed.js';
import { auditHashes } from '../../composition/audit-keys.js';
import { withAuditStore } from '../command-stores.js';
import { EXIT } from '../exit.js';
import { type Io, report } from '../io.js';
import {
  type NoteKeysGiven,
  noteKeysOf,
  type PolicyGiven,
  proving,
  readFile,
  type StoreGiven,
  sameOriginAsTrail,
  trailPolicyOf,
} from './options.js';

/**
 * `audit verify --since CHECKPOINT_FILE [--policy FILE]`: the newest stored checkpoint of the
 * tree is signed and extends the one saved earlier, and the records since it verify. With
 * `--policy` (decisions §19), the newest checkpoint must meet the policy's quorum, and the
 * saved one's cosignatures, if it carries any of the policy's witnesses, must verify. Exit 1
 * names what is wrong.
 */
export async function verifySinceCommand(
  values: StoreGiven & NoteKeysGiven & PolicyGiven & { readonly since: string },
  io: Io,
): Promise<number> {
  const path = values.since;
  const keys = noteKeysOf(values, io);
  const check = await trailPolicyOf(values.policy, keys);
  const saved = readFile('--since', path).toString('utf8');
  const refused = (reason: string) => {
    report(io, values.json, { ok: false, reason }, `audit checkpoints REFUSED: ${reason}`);
    return EXIT.failure;
  };
  return withAuditStore(values.auditStore, io, async (log) => {
    await sameOriginAsTrail(log, values, io);
    let old: OpenedCheckpoint;
    let newest: OpenedCheckpoint;
    let stored: Awaited<ReturnType<typeof newestNoted>>;
    try {
      old = openCheckpoint(saved, keys, `the checkpoint in ${path}`);
      stored = await newestNoted(log);
      newest = openCheckpoint(
        stored.note,
        keys,
        `the store's newest checkpoint (seq ${stored.checkpoint.seq})`,
      );
    } catch (error) {
      if (error instanceof AuditProofError) return refused(error.message);
      throw error;
    }
    const savedWitnessing = check === undefined ? undefined : witnessingOf(saved, check);
    if (savedWitnessing?.refused !== undefined)
      return refused(`the checkpoint in ${path}: ${savedWitnessing.refused}`);
    const result = await proving(() => verifySince(auditHashes, log, old.body, newest.body));
    if (!result.ok) {
      report(io, values.json, result, `audit chain BROKEN at record ${result.brokenAt}: ${result.reason}`);
      return EXIT.failure;
    }
    let witnessed: string[] = [];
    let data: Record<string, unknown> = result;
    if (check !== undefined) {
      const newestWitnessing = witnessingOf(cosignedNote({ ...stored.checkpoint, note: stored.note }), check);
      if (!newestWitnessing.met) {
        const found = await proving(() =>
          witnessedCheckpoints(
            log,
            check,
            (note, what) => openCheckpoint(note, keys, what).body,
            (reason) => new AuditProofError(reason),
          ),
        );
        const reason =
          notWitnessedReason(found, check, new Date()) ??
          `the newest checkpoint (${newest.body.size} records) does not meet ${quorumOf(check)}: cosigned by ${witnessList(newestWitnessing.witnesses)}; ${lastWitnessed(found.met, new Date())}`;
        report(
          io,
          values.json,
          { ...result, ok: false, reason, witnesses: newestWitnessing.witnesses },
          `audit checkpoints NOT WITNESSED: ${reason}`,
        );
        return EXIT.failure;
      }
      data = {
        ...result,
        witnesses: newestWitnessing.witnesses,
        sinceWitnesses: savedWitnessing?.witnesses ?? [],
      };
      witnessed = [
        `witnessed: the newest checkpoint (${newest.body.size} records) is cosigned by ${witnessList(newestWitnessing.witnesses)}, meeting ${quorumOf(check)}; the one given by ${witnessList(savedWitnessing?.witnesses ?? [])}`,
      ];
    }
    const after = result.records - (newest.body.size - old.body.size);
    report(io, values.json, data, [
      `audit trail intact since the checkpoint of ${old.body.size} records: the newest checkpoint (${newest.body.size}) extends it, and the ${result.records} record(s) after it verify`,
      ...witnessed,
      ...(after > 0 ? [`${after} record(s) after the newest checkpoint, covered by the chain alone`] : []),
    ]);
    return EXIT.ok;
  });
}
