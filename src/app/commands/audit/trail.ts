// The trail as the store holds it (decisions §9): `audit verify` (the hash chain, and each
// signed checkpoint with the keys given), `audit query`, `audit checkpoints` and `audit keygen`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditVerification } from '../../../domain/audit/chain-walker.js';
import { type AuditCheckpoint, describeCheckpoint } from '../../../domain/audit/checkpoint.js';
import type { AuditQuery, StoredAuditRecord } from '../../../domain/audit/record.js';
import type { AuditLog } from '../../../ports/audit-log.js';
import { NoteError, type NoteVerifier } from '../../../tlog/note.js';
import { describeQuorum } from '../../../tlog/policy.js';
import {
  CheckpointEvidenceError,
  type Evidence,
  gatherCheckpoints,
} from '../../audit/checkpoint-evidence.js';
import {
  ContinuationError,
  continuationData,
  continuationLine,
  keysOfEveryOrigin,
  openContinuations,
  originAt,
  type TrustedContinuations,
  trustedContinuations,
} from '../../audit/continuation.js';
import { trailOrigin } from '../../audit/origin.js';
import { AuditProofError, openCheckpoint } from '../../audit/proving.js';
import {
  cosignedNote,
  cosignerNames,
  notWitnessedReason,
  type PolicyCheck,
  policyLogKeys,
  quorumOf,
  requireTrailLog,
  type Witnessing,
  witnessedCheckpoints,
  witnessingOf,
  witnessList,
} from '../../audit/witnessed.js';
import { auditHashes, generateCheckpointKeys, noteVerifier } from '../../composition/audit-keys.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import {
  type ArchiveGiven,
  keyringOf,
  noteKeysOf,
  type PolicyGiven,
  policyCheckOf,
  proving,
  type StoreGiven,
} from './options.js';

const line = (r: StoredAuditRecord) =>
  `${r.seq}  ${r.at.toISOString()}  ${r.clientId}  ${r.operation}${r.crn ? ` ${r.crn}` : ''}  ${r.status}${r.problem ? ` ${r.problem}` : ''}${r.access ? ` (${r.access})` : ''}${r.issued ? `  issued ${r.issued}` : ''}${r.onBehalfOf ? `  on behalf of ${r.onBehalfOf}` : ''}  ${r.requestId}`;

const checkpointLine = (c: AuditCheckpoint) => {
  const cosigners = cosignerNames(c.cosignatures);
  return `${c.seq}  ${c.time}  key ${c.keyId}  head ${c.head}${cosigners.length > 0 ? `  cosigned by ${cosigners.join(', ')}` : ''}`;
};

/**
 * `audit verify`: the hash chain, and with `--public-key` every checkpoint (stored, and in
 * each `--checkpoints` file): its signature, and that the chain passes through its head. With
 * `--policy FILE` (decisions §19), the newest checkpoint (with a note) must also meet the
 * policy's quorum with cosignatures that verify, its note signed by a key given (which the
 * policy's `log` line must be) or, none given, by the policy's `log` key for the trail's origin.
 * Exit 1 names the first thing wrong.
 */
export async function verify(
  values: StoreGiven &
    PolicyGiven & {
      readonly publicKey?: readonly string[] | undefined;
      readonly checkpoints?: readonly string[] | undefined;
      readonly origin?: string | undefined;
    },
  io: Io,
): Promise<number> {
  const keys = values.publicKey ?? [];
  const files = values.checkpoints ?? [];
  if (files.length > 0 && keys.length === 0) {
    throw new UsageError(
      '--checkpoints needs --public-key: a checkpoint counts only once its signature is checked',
    );
  }
  const check = policyCheckOf(values.policy);
  const keyring = keys.length > 0 ? await keyringOf(keys) : undefined;
  // The same keys, named by the log's origin, check the checkpoints' notes (decisions §14).
  const noteKeys = keyring === undefined ? [] : noteKeysOf({ publicKey: keys, origin: values.origin }, io);
  if (check !== undefined && noteKeys.length > 0) await proving(async () => requireTrailLog(check, noteKeys));
  return withAuditStore(values.auditStore, io, async (log) => {
    if (keyring === undefined) {
      // No key given: with a policy, its `log` line for the trail's origin opens the newest checkpoint.
      const origin = check === undefined ? undefined : await trailOrigin(log);
      const policyKeys =
        check === undefined || origin === undefined
          ? undefined
          : await proving(async () => policyLogKeys(check, origin, noteVerifier));
      const continued = await continuationsOf(log, policyKeys);
      if ('refused' in continued) return refusedContinuation(io, values.json, continued.refused);
      const witnessed =
        check === undefined
          ? undefined
          : await witnessedVerdict(log, check, policyKeys ?? [], `the log key of ${check.source}`);
      return verifyChainOnly(log, values.json, io, witnessed, continued);
    }
    const continued = await continuationsOf(log, noteKeys);
    if ('refused' in continued) return refusedContinuation(io, values.json, continued.refused);
    const { opened } = continued;
    let evidence: Evidence;
    try {
      evidence = await gatherCheckpoints(
        log,
        files,
        keyring,
        [...keysOfEveryOrigin(noteKeys, opened, auditHashes.sha256), ...continued.learned],
        opened.length === 0 ? undefined : (size) => originAt(size, opened, values.origin ?? ''),
      );
    } catch (error) {
      if (!(error instanceof CheckpointEvidenceError)) throw error;
      report(
        io,
        values.json,
        { ok: false, reason: error.message },
        `audit checkpoints REFUSED: ${error.message}`,
      );
      return EXIT.failure;
    }
    const result = await log.verify(evidence.checkpoints);
    const witnessed =
      check !== undefined && result.ok ? await witnessedVerdict(log, check, noteKeys) : undefined;
    return reportVerification(
      io,
      values.json,
      result,
      evidence,
      [],
      (await log.archivedHead()).seq,
      witnessed,
      continued,
    );
  });
}

/**
 * The trail's continuations (ADR 30): with `keys`, the keys of every log they name learned and
 * anchored in them, and each opened; without, read only. Or why they cannot be.
 */
async function continuationsOf(
  log: AuditLog,
  keys: readonly NoteVerifier[] | undefined,
): Promise<Continued | { readonly refused: string }> {
  try {
    const records = await log.continuations();
    if (keys === undefined)
      return {
        opened: openContinuations(records, undefined, auditHashes.sha256),
        signed: false,
        learned: [],
      };
    return { ...trustedContinuations(records, keys, auditHashes.sha256, noteVerifier), signed: true };
  } catch (error) {
    if (error instanceof ContinuationError) return { refused: error.message };
    throw error;
  }
}

/** A trail's continuations as `audit verify` read them, the keys they name, and whether their statements' signatures were checked. */
interface Continued extends TrustedContinuations {
  readonly signed: boolean;
}

function refusedContinuation(io: Io, json: boolean | undefined, reason: string): number {
  report(io, json, { ok: false, reason }, `audit continuation REFUSED: ${reason}`);
  return EXIT.failure;
}

/** How `audit verify --policy` found the trail's newest checkpoint: witnessed (and by whom), or why not. */
type WitnessVerdict =
  | { readonly ok: true; readonly line: string; readonly data: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string; readonly data: Record<string, unknown> };

/**
 * The newest checkpoint (with a note) against the policy: its note opened with the log's keys,
 * its cosignatures checked; when it falls short, the newest that did meet the quorum, found
 * in the same pass over the stored checkpoints.
 */
async function witnessedVerdict(
  log: AuditLog,
  check: PolicyCheck,
  noteKeys: readonly NoteVerifier[],
  /** Where the keys came from, when not from the operator: the policy's `log` line. */
  keysFrom?: string,
): Promise<WitnessVerdict> {
  const found = await proving(() =>
    witnessedCheckpoints(
      log,
      check,
      (note, what) =>
        openCheckpoint(note, noteKeys, keysFrom ? `${what}, opened with ${keysFrom}` : what).body,
      (reason) => new AuditProofError(reason),
    ),
  );
  const quorum = describeQuorum(check.policy.quorum);
  const newest = found.newest;
  const data = {
    quorum,
    witnesses: newest?.witnessing.witnesses ?? [],
    ...(found.met
      ? {
          newestWitnessed: {
            size: found.met.body.size,
            seq: found.met.checkpoint.seq,
            time: found.met.checkpoint.time,
          },
        }
      : {}),
  };
  const reason = notWitnessedReason(found, check, new Date());
  if (reason !== undefined || newest === undefined)
    return { ok: false, reason: reason ?? 'no checkpoint', data };
  return {
    ok: true,
    line: `witnessed: the newest checkpoint (${newest.body.size} records) is cosigned by ${witnessList(newest.witnessing.witnesses)}, meeting ${quorumOf(check)}`,
    data,
  };
}

async function verifyChainOnly(
  log: AuditLog,
  json: boolean | undefined,
  io: Io,
  witnessed: WitnessVerdict | undefined,
  continued: Continued,
): Promise<number> {
  const result = await log.verify();
  const archived = (await log.archivedHead()).seq;
  let unchecked = 0;
  for await (const _ of log.checkpoints()) unchecked++;
  const note =
    unchecked > 0 ? [`${unchecked} stored checkpoint(s) not checked: give --public-key to check them`] : [];
  return reportVerification(
    io,
    json,
    unchecked > 0 ? { ...result, uncheckedCheckpoints: unchecked } : result,
    undefined,
    note,
    archived,
    result.ok ? witnessed : undefined,
    continued,
  );
}

function reportVerification(
  io: Io,
  json: boolean | undefined,
  result: AuditVerification & { uncheckedCheckpoints?: number },
  evidence: Evidence | undefined,
  note: string[] = [],
  /** Records 1..archived were archived and let go of: the walk began after them. */
  archived = 0,
  /** With `--policy`: the newest checkpoint witnessed, or why not. */
  witnessed?: WitnessVerdict,
  /** Where the trail went on as a new log after a loss (ADR 30). */
  continued?: Continued,
): number {
  const fromFiles =
    evidence && evidence.onlyInFiles > 0
      ? [`note: ${evidence.onlyInFiles} checkpoint(s) from --checkpoints are not in the store`]
      : [];
  if (!result.ok) {
    report(io, json, result, [
      `audit chain BROKEN at record ${result.brokenAt}: ${result.reason}`,
      ...fromFiles,
    ]);
    return EXIT.failure;
  }
  if (evidence !== undefined && evidence.checkpoints.size === 0 && result.records > 0) {
    const reason = 'no checkpoint was found to check the chain against (none stored, none in --checkpoints)';
    report(io, json, { ok: false, records: result.records, reason }, `audit checkpoints MISSING: ${reason}`);
    return EXIT.failure;
  }
  if (witnessed !== undefined && !witnessed.ok) {
    report(io, json, { ok: false, records: result.records, reason: witnessed.reason, ...witnessed.data }, [
      `audit checkpoints NOT WITNESSED: ${witnessed.reason}`,
      ...fromFiles,
    ]);
    return EXIT.failure;
  }
  const newest = evidence?.checkpoints.newest;
  const checked = evidence ? `, ${evidence.checkpoints.size} signed checkpoint(s) verified` : '';
  const after = newest
    ? [
        `newest: ${describeCheckpoint(newest)}; ${archived + result.records - newest.seq} record(s) after it, covered by the chain alone`,
      ]
    : [];
  const from =
    archived > 0
      ? [
          `records 1..${archived} were archived and let go of: the walk began at ${archived + 1} (check the archive with case-read audit verify --archive DIR)`,
        ]
      : [];
  const continuations = continued?.opened ?? [];
  const shown = {
    ...result,
    ...(archived > 0 ? { archivedUpTo: archived } : {}),
    ...(witnessed?.ok ? { witnessed: witnessed.data } : {}),
    ...(continuations.length > 0 ? { continuations: continuations.map(continuationData) } : {}),
  };
  const continuedLines = continuations.map(continuationLine);
  if (continuations.length > 0 && continued?.signed === false)
    continuedLines.push(
      "the continuations' statements were read, their signatures not checked: give --public-key (or --policy) to check them",
    );
  report(io, json, newest ? { ...shown, newestCheckpoint: newest } : shown, [
    `audit chain intact: ${result.records} record(s)${checked}`,
    ...(witnessed?.ok ? [witnessed.line] : []),
    ...continuedLines,
    ...from,
    ...after,
    ...note,
    ...fromFiles,
  ]);
  return EXIT.ok;
}

/**
 * `audit query [--request-id ID] [--client C] [--crn CRN] [--since TIME] [--limit N]`: the
 * store's records, oldest first; with `--archive DIR` (and the keys its checkpoint is checked
 * with), the archived records instead, each bundle checked against its hash tile as it is read.
 */
export async function query(
  values: StoreGiven &
    ArchiveGiven & {
      readonly requestId?: string | undefined;
      readonly client?: string | undefined;
      readonly crn?: string | undefined;
      readonly since?: string | undefined;
      readonly limit?: string | undefined;
    },
  io: Io,
): Promise<number> {
  const since = values.since === undefined ? undefined : new Date(values.since);
  if (since !== undefined && Number.isNaN(since.getTime()))
    throw new UsageError('--since must be an ISO 8601 date-time, e.g. 2026-11-22T09:00:00Z');
  if (values.limit !== undefined && !/^\d{1,7}$/.test(values.limit))
    throw new UsageError('--limit must be a whole number');
  const filter: AuditQuery = {
    ...(values.requestId ? { requestId: values.requestId } : {}),
    ...(values.client ? { clientId: values.client } : {}),
    ...(values.crn ? { crn: values.crn } : {}),
    ...(since ? { since } : {}),
    ...(values.limit ? { limit: Number(values.limit) } : {}),
  };
  const show = (records: readonly StoredAuditRecord[]) => {
    report(io, values.json, records, records.length === 0 ? ['no records'] : records.map(line));
    return EXIT.ok;
  };
  if (values.archive !== undefined) {
    return show(await (await import('./archive.js')).queryArchive(values.archive, filter, values, io));
  }
  return withAuditStore(values.auditStore, io, async (log) => show(await log.query(filter)));
}

/** `audit keygen --dir DIR`: a new Ed25519 signing key pair; an existing key is never overwritten. */
export async function keygen(
  values: { readonly dir: string; readonly json?: boolean | undefined },
  io: Io,
): Promise<number> {
  // `--dir ''` names no directory.
  if (!values.dir) throw new UsageError('audit keygen needs --dir DIR');
  const keys = await generateCheckpointKeys();
  const privateKey = join(values.dir, 'audit-signing-key.pem');
  const publicKey = join(values.dir, 'audit-signing-key.pub.pem');
  try {
    mkdirSync(values.dir, { recursive: true, mode: 0o700 });
    writeFileSync(privateKey, keys.privatePem, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CommandError(
      code === 'EEXIST'
        ? `${privateKey} exists: a key is never overwritten (to rotate, write the new key to another directory)`
        : `${privateKey} cannot be written (${code})`,
    );
  }
  writeFileSync(publicKey, keys.publicPem, { mode: 0o644 });
  report(io, values.json, { privateKey, publicKey, keyId: keys.keyId }, [
    `private key: ${privateKey} (mode 0600: for AUDIT_SIGNING_KEY, nowhere else)`,
    `public key:  ${publicKey} (for audit verify --public-key; keep a copy away from the store)`,
    `key id:      ${keys.keyId}`,
  ]);
  return EXIT.ok;
}

/**
 * `audit checkpoints [--policy FILE]`: the stored checkpoints, lowest seq first, each with the
 * key names its cosignatures are signed under; with `--policy`, the policy's witnesses whose
 * cosignatures verify and whether they meet its quorum (the log's own signature is `audit
 * verify`'s to check). `--json` writes one JSON line each.
 */
export async function checkpoints(values: StoreGiven & PolicyGiven, io: Io): Promise<number> {
  const check = policyCheckOf(values.policy);
  return withAuditStore(values.auditStore, io, async (log) => {
    let count = 0;
    let bad = 0;
    for await (const read of log.checkpoints()) {
      if ('invalid' in read) {
        bad++;
        io.err(`case-read: ${read.invalid}`);
        continue;
      }
      count++;
      const witnessing = check === undefined ? [] : [policyColumn(read, check)];
      if (values.json) {
        io.out(
          JSON.stringify({
            ...read,
            ...(read.cosignatures?.length ? { cosignedBy: cosignerNames(read.cosignatures) } : {}),
            ...Object.fromEntries(witnessing.map((w) => ['policy', w.data])),
          }),
        );
      } else {
        io.out([checkpointLine(read), ...witnessing.map((w) => w.text)].join('  '));
      }
    }
    if (count === 0 && bad === 0 && !values.json) io.out('no checkpoints');
    return bad > 0 ? EXIT.failure : EXIT.ok;
  });
}

/** A checkpoint as `audit checkpoints --policy` shows it: the policy's witnesses that cosigned it, and the quorum met or not. */
function policyColumn(
  checkpoint: AuditCheckpoint,
  check: PolicyCheck,
): { readonly text: string; readonly data: Record<string, unknown> } {
  const quorum = describeQuorum(check.policy.quorum);
  if (checkpoint.note === undefined) {
    return { text: 'no note: not cosignable', data: { quorum, witnesses: [], quorumMet: false } };
  }
  let witnessing: Witnessing;
  try {
    witnessing = witnessingOf(cosignedNote(checkpoint as AuditCheckpoint & { note: string }), check);
  } catch (error) {
    if (!(error instanceof NoteError)) throw error;
    witnessing = { witnesses: [], met: false, refused: `it is not a signed note: ${error.message}` };
  }
  const verdict =
    witnessing.refused !== undefined
      ? `REFUSED: ${witnessing.refused}`
      : `quorum ${quorum} ${witnessing.met ? 'met' : 'NOT met'}`;
  return {
    text: `witnesses ${witnessing.witnesses.length > 0 ? witnessing.witnesses.join(', ') : 'none'}: ${verdict}`,
    data: {
      quorum,
      witnesses: witnessing.witnesses,
      quorumMet: witnessing.met,
      ...(witnessing.refused === undefined ? {} : { refused: witnessing.refused }),
    },
  };
}
