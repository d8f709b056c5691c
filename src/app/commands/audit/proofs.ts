// The audit log's C2SP side (decisions §14): `audit vkey`, the verifier key an auditor checks
// checkpoints and proofs with; `audit verify-proof`, an offline check of one entry's tlog-proof
// against it; `audit checkpoint`, `audit prove` (inclusion and consistency, from the store or
// an archive) and `audit verify --since`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditQuery } from '../../../domain/audit/record.js';
import type { AuditLog } from '../../../ports/audit-log.js';
import { type Hash, leafHash, verifyInclusion } from '../../../tlog/merkle.js';
import { hashToBase64, NoteError, type NoteVerifier, openCheckpointNote } from '../../../tlog/note.js';
import { formatTlogProof, parseTlogProof } from '../../../tlog/tlog-proof.js';
import {
  AuditProofError,
  newestNoted,
  type OpenedCheckpoint,
  openCheckpoint,
  proveConsistency,
  proveInclusion,
  verifySince,
} from '../../audit/proving.js';
import {
  cosignedNote,
  lastWitnessed,
  notWitnessedReason,
  type PolicyCheck,
  policyLogKeys,
  quorumOf,
  requireTrailLog,
  type WitnessedCheckpoint,
  type Witnessing,
  witnessedCheckpoints,
  witnessingOf,
  witnessList,
} from '../../audit/witnessed.js';
import { openArchive } from '../../composition/audit-archive-tiles.js';
import {
  auditHashes,
  CheckpointKeyError,
  notePublicKey,
  noteSigner,
  noteVerifier,
  sha256Bytes,
  verifyNoteSignature,
} from '../../composition/audit-keys.js';
import { auditOriginOf } from '../../composition/config.js';
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
  readFile,
  readSigningKey,
  type StoreGiven,
  sameOriginAsTrail,
  verifierKeyOf,
  wholeOption,
} from './options.js';

/**
 * `audit vkey [--public-key PEM] [--origin O]`: the verifier key line of the log's key, by
 * default `AUDIT_SIGNING_KEY`'s public half under `AUDIT_ORIGIN`.
 */
export async function vkey(
  values: {
    readonly publicKey?: string | undefined;
    readonly origin?: string | undefined;
    readonly json?: boolean | undefined;
  },
  io: Io,
): Promise<number> {
  const origin = values.origin ?? auditOriginOf(io.env);
  const path = values.publicKey ?? io.env.AUDIT_SIGNING_KEY;
  if (!path) throw new UsageError('audit vkey needs --public-key PEM, or AUDIT_SIGNING_KEY set');
  const what = values.publicKey !== undefined ? '--public-key' : 'AUDIT_SIGNING_KEY:';
  const pem = (values.publicKey !== undefined ? readFile(what, path) : readSigningKey(path)).toString('utf8');
  let key: { readonly vkey: string; readonly keyId: number };
  try {
    key = /PRIVATE KEY/.test(pem) ? noteSigner(pem, origin) : notePublicKey(pem, origin);
  } catch (error) {
    if (error instanceof CheckpointKeyError) throw new CommandError(`${what} ${path}: ${error.message}`);
    if (error instanceof NoteError) throw new UsageError(`--origin: ${error.message}`);
    throw error;
  }
  report(
    io,
    values.json,
    { vkey: key.vkey, origin, keyId: key.keyId.toString(16).padStart(8, '0') },
    key.vkey,
  );
  return EXIT.ok;
}

/**
 * `audit verify-proof PROOF ENTRY --vkey VKEY [--policy FILE]`: the proof's checkpoint is
 * signed by the key and names the key's log, and the entry's leaf hash with the proof's hashes
 * makes its root; with `--policy`, the checkpoint also carries a quorum of the policy's
 * witnesses' cosignatures, each verifying (decisions §19). Offline: no store, no network.
 * Exit 1 says which check failed.
 */
export async function verifyProof(
  proofPath: string,
  entryPath: string,
  values: PolicyGiven & { readonly vkey: string; readonly json?: boolean | undefined },
  io: Io,
): Promise<number> {
  const key = verifierKeyOf(values.vkey);
  const check = policyCheckOf(values.policy);
  if (check !== undefined) await proving(async () => requireTrailLog(check, [key]));
  const proof = parseTlogProof(readFile('PROOF', proofPath).toString('utf8'));
  if ('invalid' in proof)
    throw new CommandError(`${proofPath} is not a c2sp.org/tlog-proof@v1: ${proof.invalid}`);
  const opened = openCheckpointNote(proof.checkpoint, [key], verifyNoteSignature);
  if (!opened.ok) throw new CommandError(`the proof's checkpoint: ${opened.reason}`);
  const { body } = opened;
  if (body.origin !== key.name) {
    throw new CommandError(`the proof's checkpoint is of the log ${body.origin}, not ${key.name}`);
  }
  let witnessed: Witnessing | undefined;
  if (check !== undefined) {
    witnessed = witnessingOf(proof.checkpoint, check);
    if (!witnessed.met) {
      throw new CommandError(
        `the proof's checkpoint (${body.size} records) is not witnessed: ${witnessed.refused ?? `it does not meet ${quorumOf(check)}: cosigned by ${witnessList(witnessed.witnesses)}`}`,
      );
    }
  }
  const leaf = leafHash(sha256Bytes, readFile('ENTRY', entryPath));
  if (!verifyInclusion(sha256Bytes, proof.index, body.size, leaf, proof.hashes, body.root)) {
    throw new CommandError(
      `the entry is not leaf ${proof.index} of the tree of ${body.size} the checkpoint signs: the entry, or the proof, was changed`,
    );
  }
  report(
    io,
    values.json,
    {
      ok: true,
      origin: body.origin,
      index: proof.index,
      size: body.size,
      ...(witnessed === undefined ? {} : { witnesses: witnessed.witnesses }),
    },
    `proof verified: the entry is leaf ${proof.index} (record ${proof.index + 1}) of ${body.origin}, in its tree of ${body.size} signed by ${opened.verifiedBy.join(', ')}${check !== undefined && witnessed !== undefined ? `, cosigned by ${witnessList(witnessed.witnesses)} (${quorumOf(check)} met)` : ''}`,
  );
  return EXIT.ok;
}

/**
 * `audit checkpoint`: the newest stored checkpoint of the tree as one signed note, exactly: the
 * log's signature line, then every cosignature line kept with it (decisions §19).
 */
export async function checkpoint(values: StoreGiven, io: Io): Promise<number> {
  return withAuditStore(values.auditStore, io, async (log) => {
    const newest = await proving(() => newestNoted(log));
    const note = cosignedNote({ ...newest.checkpoint, note: newest.note });
    if (values.json) {
      report(
        io,
        true,
        {
          seq: newest.checkpoint.seq,
          time: newest.checkpoint.time,
          note,
          cosignatures: newest.checkpoint.cosignatures ?? [],
        },
        '',
      );
    } else {
      io.out(note.slice(0, -1));
    }
    return EXIT.ok;
  });
}

/**
 * `audit prove REQUEST_ID | --seq N --out DIR`: each record's entry and its tlog-proof against
 * the newest checkpoint of the tree (with `--archive DIR`, against the archive's checkpoint,
 * from its tiles); `audit prove --consistency OLD [--size NEW]`: the
 * consistency proof's hashes. Every proof is checked against the signed root before it is written.
 */
export async function prove(
  requestId: string | undefined,
  values: StoreGiven &
    ArchiveGiven &
    PolicyGiven & {
      readonly seq?: string | undefined;
      readonly out?: string | undefined;
      readonly consistency?: string | undefined;
      readonly size?: string | undefined;
    },
  io: Io,
): Promise<number> {
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
    const given = values.size === undefined ? undefined : wholeOption('--size', values.size);
    if (values.archive !== undefined) {
      if (given !== undefined)
        throw new UsageError("--archive proves up to the archive's checkpoint: no --size");
      const keys = noteKeysOf(values, io);
      const dir = values.archive;
      const reader = await proving(async () => openArchive(dir, keys));
      const proof = await proving(async () => reader.proveConsistency(oldSize));
      report(
        io,
        values.json,
        { oldSize, newSize: reader.size, proof: proof.map(hashToBase64) },
        proof.map(hashToBase64),
      );
      return EXIT.ok;
    }
    return withAuditStore(values.auditStore, io, async (log) => {
      await sameOriginAsTrail(log, values, io);
      const signed = (await proving(() => newestNoted(log))).body;
      const newSize = given ?? signed.size;
      const proof = await proving(() => proveConsistency(auditHashes, log, oldSize, newSize, signed));
      report(io, values.json, { oldSize, newSize, proof: proof.map(hashToBase64) }, proof.map(hashToBase64));
      return EXIT.ok;
    });
  }
  if (values.size !== undefined) throw new UsageError('--size goes with --consistency');
  if ((requestId === undefined) === (values.seq === undefined)) {
    throw new UsageError('audit prove needs a REQUEST_ID or --seq N (one of them)');
  }
  if (values.out === undefined) throw new UsageError('audit prove needs --out DIR');
  const out = values.out;
  const bySeq = values.seq === undefined ? undefined : wholeOption('--seq', values.seq);
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
  const check = policyCheckOf(values.policy);
  if (check !== undefined) await proving(async () => requireTrailLog(check, keys));
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
