// The audit log's C2SP side (decisions §14): `audit vkey`, the verifier key an auditor checks
// checkpoints and proofs with; `audit verify-proof`, an offline check of one entry's tlog-proof
// against it; `audit checkpoint`, `audit prove` (inclusion and consistency, from the store or
// an archive) and `audit verify --since`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Hash, leafHash, verifyInclusion } from '../../../tlog/merkle.js';
import { hashToBase64, NoteError, openCheckpointNote } from '../../../tlog/note.js';
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
import { openArchive } from '../../composition/audit-archive-tiles.js';
import {
  auditHashes,
  CheckpointKeyError,
  notePublicKey,
  noteSigner,
  sha256Bytes,
  verifyNoteSignature,
} from '../../composition/audit-keys.js';
import { auditOriginOf } from '../../composition/config.js';
import { parse, positionals } from '../arguments.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import {
  ARCHIVE_OPTIONS,
  NOTE_KEY_OPTIONS,
  noteKeysOf,
  proving,
  readFile,
  readSigningKey,
  STORE,
  sameOriginAsTrail,
  verifierKeyOf,
  wholeOption,
} from './options.js';

/**
 * `audit vkey [--public-key PEM] [--origin O]`: the verifier key line of the log's key, by
 * default `AUDIT_SIGNING_KEY`'s public half under `AUDIT_ORIGIN`.
 */
async function vkey(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, {
    'public-key': { type: 'string' },
    origin: { type: 'string' },
    json: { type: 'boolean' },
  });
  positionals(rest, []);
  const origin = values.origin ?? auditOriginOf(io.env);
  const path = values['public-key'] ?? io.env.AUDIT_SIGNING_KEY;
  if (!path) throw new UsageError('audit vkey needs --public-key PEM, or AUDIT_SIGNING_KEY set');
  const what = values['public-key'] !== undefined ? '--public-key' : 'AUDIT_SIGNING_KEY:';
  const pem = (values['public-key'] !== undefined ? readFile(what, path) : readSigningKey(path)).toString(
    'utf8',
  );
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
 * `audit verify-proof PROOF ENTRY --vkey VKEY`: the proof's checkpoint is signed by the key and
 * names the key's log, and the entry's leaf hash with the proof's hashes makes its root.
 * Offline: no store, no network. Exit 1 says which check failed.
 */
async function verifyProof(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, { vkey: { type: 'string' }, json: { type: 'boolean' } });
  const [proofPath, entryPath] = positionals(rest, ['PROOF', 'ENTRY']) as [string, string];
  if (values.vkey === undefined) throw new UsageError('audit verify-proof needs --vkey VKEY_LINE_OR_FILE');
  const key = verifierKeyOf(values.vkey);
  const proof = parseTlogProof(readFile('PROOF', proofPath).toString('utf8'));
  if ('invalid' in proof)
    throw new CommandError(`${proofPath} is not a c2sp.org/tlog-proof@v1: ${proof.invalid}`);
  const opened = openCheckpointNote(proof.checkpoint, [key], verifyNoteSignature);
  if (!opened.ok) throw new CommandError(`the proof's checkpoint: ${opened.reason}`);
  const { body } = opened;
  if (body.origin !== key.name) {
    throw new CommandError(`the proof's checkpoint is of the log ${body.origin}, not ${key.name}`);
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
    { ok: true, origin: body.origin, index: proof.index, size: body.size },
    `proof verified: the entry is leaf ${proof.index} (record ${proof.index + 1}) of ${body.origin}, in its tree of ${body.size} signed by ${opened.verifiedBy.join(', ')}`,
  );
  return EXIT.ok;
}

/** `audit checkpoint`: the newest stored checkpoint of the tree, as its signed note, exactly. */
async function checkpoint(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, STORE);
  positionals(rest, []);
  return withAuditStore(values['audit-store'], io, async (log) => {
    const newest = await proving(() => newestNoted(log));
    if (values.json) {
      report(io, true, { seq: newest.checkpoint.seq, time: newest.checkpoint.time, note: newest.note }, '');
    } else {
      io.out(newest.note.slice(0, -1));
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
async function prove(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, {
    ...STORE,
    seq: { type: 'string' },
    out: { type: 'string' },
    consistency: { type: 'string' },
    size: { type: 'string' },
    ...ARCHIVE_OPTIONS,
  });
  if (values.consistency !== undefined) {
    positionals(rest, []);
    if (values.seq !== undefined || values.out !== undefined) {
      throw new UsageError('--consistency takes no --seq or --out: it writes the proof to stdout');
    }
    const oldSize = wholeOption('--consistency', values.consistency);
    const given = values.size === undefined ? undefined : wholeOption('--size', values.size);
    if (values.archive !== undefined) {
      if (given !== undefined)
        throw new UsageError("--archive proves up to the archive's checkpoint: no --size");
      const keys = noteKeysOf(values, io);
      const reader = await proving(async () => openArchive(values.archive as string, keys));
      const proof = await proving(async () => reader.proveConsistency(oldSize));
      report(
        io,
        values.json,
        { oldSize, newSize: reader.size, proof: proof.map(hashToBase64) },
        proof.map(hashToBase64),
      );
      return EXIT.ok;
    }
    return withAuditStore(values['audit-store'], io, async (log) => {
      await sameOriginAsTrail(log, values, io);
      const signed = (await proving(() => newestNoted(log))).body;
      const newSize = given ?? signed.size;
      const proof = await proving(() => proveConsistency(auditHashes, log, oldSize, newSize, signed));
      report(io, values.json, { oldSize, newSize, proof: proof.map(hashToBase64) }, proof.map(hashToBase64));
      return EXIT.ok;
    });
  }
  if (values.size !== undefined) throw new UsageError('--size goes with --consistency');
  if (rest.length > 1) throw new UsageError(`unexpected argument: ${rest.slice(1).join(' ')}`);
  const [requestId] = rest;
  if ((requestId === undefined) === (values.seq === undefined)) {
    throw new UsageError('audit prove needs a REQUEST_ID or --seq N (one of them)');
  }
  if (values.out === undefined) throw new UsageError('audit prove needs --out DIR');
  const out = values.out;
  const bySeq = values.seq === undefined ? undefined : wholeOption('--seq', values.seq);
  const notFound = () => new CommandError(`no audit record has request id ${JSON.stringify(requestId)}`);
  if (values.archive !== undefined) {
    const keys = noteKeysOf(values, io);
    const reader = await proving(async () => openArchive(values.archive as string, keys));
    const seqs =
      bySeq !== undefined
        ? [bySeq]
        : (await reader.query({ requestId: requestId as string, limit: 10 })).map((r) => r.seq);
    if (seqs.length === 0) throw notFound();
    const proofs = [];
    for (const seq of seqs) proofs.push({ seq, ...(await proving(async () => reader.prove(seq))) });
    return writeProofs(io, values.json, out, proofs, { note: reader.note, size: reader.size });
  }
  return withAuditStore(values['audit-store'], io, async (log) => {
    await sameOriginAsTrail(log, values, io);
    const seqs =
      bySeq !== undefined
        ? [bySeq]
        : (await log.query({ requestId: requestId as string, limit: 10 })).map((r) => r.seq);
    if (seqs.length === 0) throw notFound();
    const newest = await proving(() => newestNoted(log));
    const proofs = [];
    for (const seq of seqs)
      proofs.push({ seq, ...(await proving(() => proveInclusion(auditHashes, log, seq, newest.body))) });
    return writeProofs(io, values.json, out, proofs, { note: newest.note, size: newest.body.size });
  });
}

/** Writes each record's entry and tlog-proof (against `checkpoint`) to `out`, readable by its owner only. */
function writeProofs(
  io: Io,
  json: boolean | undefined,
  out: string,
  proofs: readonly { readonly seq: number; readonly entry: Uint8Array; readonly proof: readonly Hash[] }[],
  checkpoint: { readonly note: string; readonly size: number },
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
  report(
    io,
    json,
    { checkpointSize: checkpoint.size, written },
    written.map(
      (w) =>
        `record ${w.seq}: ${w.entry} and ${w.proof} (against the checkpoint of ${checkpoint.size} records)`,
    ),
  );
  return EXIT.ok;
}

/**
 * `audit verify --since CHECKPOINT_FILE`: the newest stored checkpoint of the tree is signed
 * and extends the one saved earlier, and the records since it verify. Exit 1 names what is wrong.
 */
async function verifySinceCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, {
    ...STORE,
    since: { type: 'string' },
    ...NOTE_KEY_OPTIONS,
  });
  positionals(rest, []);
  const path = values.since as string;
  const keys = noteKeysOf(values, io);
  const saved = readFile('--since', path).toString('utf8');
  const refused = (reason: string) => {
    report(io, values.json, { ok: false, reason }, `audit checkpoints REFUSED: ${reason}`);
    return EXIT.failure;
  };
  return withAuditStore(values['audit-store'], io, async (log) => {
    await sameOriginAsTrail(log, values, io);
    let old: OpenedCheckpoint;
    let newest: OpenedCheckpoint;
    try {
      old = openCheckpoint(saved, keys, `the checkpoint in ${path}`);
      const stored = await newestNoted(log);
      newest = openCheckpoint(
        stored.note,
        keys,
        `the store's newest checkpoint (seq ${stored.checkpoint.seq})`,
      );
    } catch (error) {
      if (error instanceof AuditProofError) return refused(error.message);
      throw error;
    }
    const result = await proving(() => verifySince(auditHashes, log, old.body, newest.body));
    if (!result.ok) {
      report(io, values.json, result, `audit chain BROKEN at record ${result.brokenAt}: ${result.reason}`);
      return EXIT.failure;
    }
    const after = result.records - (newest.body.size - old.body.size);
    report(io, values.json, result, [
      `audit trail intact since the checkpoint of ${old.body.size} records: the newest checkpoint (${newest.body.size}) extends it, and the ${result.records} record(s) after it verify`,
      ...(after > 0 ? [`${after} record(s) after the newest checkpoint, covered by the chain alone`] : []),
    ]);
    return EXIT.ok;
  });
}

export const auditProofCommands = {
  vkey,
  'verify-proof': verifyProof,
  checkpoint,
  prove,
  'verify-since': verifySinceCommand,
} as const;
