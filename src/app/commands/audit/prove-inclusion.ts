// `audit prove REQUEST_ID | --seq N --out DIR` (decisions §14, §15, §19): records shown to be
// in the trail's tree, each entry written with its C2SP tlog-proof against a signed checkpoint:
// the store's newest, the newest a policy's quorum cosigned, or an archive's own.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditQuery } from '../../../domain/audit/record.js';
import type { AuditLog } from '../../../ports/audit-log.js';
import type { Hash } from '../../../tlog/merkle.js';
import type { NoteVerifier } from '../../../tlog/note.js';
import { formatTlogProof } from '../../../tlog/tlog-proof.js';
import { AuditProofError, newestNoted, openCheckpoint, proveInclusion } from '../../audit/proving.js';
import {
  cosignedNote,
  notWitnessedReason,
  type PolicyCheck,
  policyLogKeys,
  quorumOf,
  requireTrailLog,
  type WitnessedCheckpoint,
  witnessedCheckpoints,
  witnessList,
} from '../../audit/witnessed.js';
import { openArchive } from '../../composition/audit-archive-tiles.js';
import { auditHashes, noteVerifier } from '../../composition/audit-keys.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import {
  type ArchiveGiven,
  type NoteKeysGiven,
  noteKeysOf,
  type PolicyGiven,
  policyCheckOf,
  proving,
  type StoreGiven,
  sameOriginAsTrail,
} from './options.js';

/** The records asked for: the one `seq` names, else those of the request `requestId`; and where to write their proofs. */
export interface RecordsAsked {
  readonly requestId?: string | undefined;
  readonly seq?: number | undefined;
  readonly out: string;
}

/**
 * Each record asked for, its entry and its tlog-proof written to `asked.out`: against the newest
 * checkpoint of the tree, with `--policy` the newest one that meets the policy's quorum (a
 * record after it refused), with `--archive DIR` the archive's checkpoint, from its tiles.
 */
export async function proveRecords(
  asked: RecordsAsked,
  values: StoreGiven & ArchiveGiven & PolicyGiven,
  io: Io,
): Promise<number> {
  const { requestId, seq: bySeq, out } = asked;
  /** The records asked for: the one `--seq` names, else those (at most 10) with the request id; none is a command error. */
  const recordsAsked = async (
    query: (filter: AuditQuery) => Promise<readonly { readonly seq: number }[]>,
  ): Promise<number[]> => {
    const seqs =
      bySeq !== undefined
        ? [bySeq]
        : requestId === undefined
          ? []
          : (await query({ requestId, limit: 10 })).map((r) => r.seq);
    if (seqs.length === 0)
      throw new CommandError(`no audit record has request id ${JSON.stringify(requestId)}`);
    return seqs;
  };
  if (values.archive !== undefined) {
    if (values.policy !== undefined) {
      throw new UsageError(
        "--policy picks a witnessed checkpoint of the store: --archive proves against the archive's own (check that one with audit verify --archive --policy)",
      );
    }
    const keys = noteKeysOf(values, io);
    const dir = values.archive;
    const reader = await proving(async () => openArchive(dir, keys));
    const seqs = await recordsAsked((filter) => reader.query(filter));
    const proofs = [];
    for (const seq of seqs) proofs.push({ seq, ...(await proving(async () => reader.prove(seq))) });
    return writeProofs(io, values.json, out, proofs, { note: reader.note, size: reader.size });
  }
  const check = policyCheckOf(values.policy);
  return withAuditStore(values.auditStore, io, async (log) => {
    await sameOriginAsTrail(log, values, io);
    const seqs = await recordsAsked((filter) => log.query(filter));
    const against =
      check === undefined
        ? await proving(() => newestNoted(log)).then((newest) => ({
            note: cosignedNote({ ...newest.checkpoint, note: newest.note }),
            size: newest.body.size,
            body: newest.body,
          }))
        : await newestWitnessed(log, check, values, io).then((met) => ({
            note: met.note,
            size: met.body.size,
            body: met.body,
            witnesses: met.witnessing.witnesses,
          }));
    const proofs = [];
    for (const seq of seqs) {
      if (check !== undefined && seq > against.size) {
        throw new CommandError(
          `record ${seq} is after the newest checkpoint that meets ${quorumOf(check)} (${against.size} records): prove it once a checkpoint after it is cosigned`,
        );
      }
      proofs.push({ seq, ...(await proving(() => proveInclusion(auditHashes, log, seq, against.body))) });
    }
    return writeProofs(io, values.json, out, proofs, against);
  });
}

/**
 * `audit prove --policy`: the trail's newest checkpoint that meets the policy's quorum, its
 * note opened with the log's keys (those given, else AUDIT_SIGNING_KEY's, else the policy's
 * `log` lines for the trail's origin), its cosignatures checked. None is a command error naming
 * the quorum, who cosigned the newest, and that none did.
 */
async function newestWitnessed(
  log: AuditLog,
  check: PolicyCheck,
  given: NoteKeysGiven,
  io: Io,
): Promise<WitnessedCheckpoint> {
  const keysGiven =
    given.vkey !== undefined || (given.publicKey?.length ?? 0) > 0 || io.env.AUDIT_SIGNING_KEY;
  let keys: readonly NoteVerifier[];
  let keysFrom = '';
  if (keysGiven) {
    keys = noteKeysOf(given, io);
    await proving(async () => requireTrailLog(check, keys));
  } else {
    const origin = (await proving(() => newestNoted(log))).body.origin;
    keys = await proving(async () => policyLogKeys(check, origin, noteVerifier));
    keysFrom = `, opened with the log key of ${check.source}`;
  }
  const found = await proving(() =>
    witnessedCheckpoints(
      log,
      check,
      (note, what) => openCheckpoint(note, keys, `${what}${keysFrom}`).body,
      (reason) => new AuditProofError(reason),
    ),
  );
  if (found.met === undefined) {
    throw new CommandError(
      `no checkpoint to prove against: ${notWitnessedReason(found, check, new Date()) ?? `none meets ${quorumOf(check)}`}`,
    );
  }
  return found.met;
}

/** Writes each record's entry and tlog-proof (against `checkpoint`) to `out`, readable by its owner only. */
function writeProofs(
  io: Io,
  json: boolean | undefined,
  out: string,
  proofs: readonly { readonly seq: number; readonly entry: Uint8Array; readonly proof: readonly Hash[] }[],
  checkpoint: { readonly note: string; readonly size: number; readonly witnesses?: readonly string[] },
): number {
  const written: { seq: number; entry: string; proof: string }[] = [];
  for (const { seq, entry, proof } of proofs) {
    // An entry is a record: personal data, readable by its owner only.
    mkdirSync(out, { recursive: true, mode: 0o700 });
    const paths = { entry: join(out, `${seq}.entry`), proof: join(out, `${seq}.tlog-proof`) };
    writeFileSync(paths.entry, entry, { mode: 0o600 });
    writeFileSync(
      paths.proof,
      formatTlogProof({ index: seq - 1, hashes: proof, checkpoint: checkpoint.note }),
      {
        mode: 0o600,
      },
    );
    written.push({ seq, ...paths });
  }
  const cosigned =
    checkpoint.witnesses === undefined ? '' : `, cosigned by ${witnessList(checkpoint.witnesses)}`;
  report(
    io,
    json,
    {
      checkpointSize: checkpoint.size,
      ...(checkpoint.witnesses === undefined ? {} : { witnesses: checkpoint.witnesses }),
      written,
    },
    written.map(
      (w) =>
        `record ${w.seq}: ${w.entry} and ${w.proof} (against the checkpoint of ${checkpoint.size} records${cosigned})`,
    ),
  );
  return EXIT.ok;
}
