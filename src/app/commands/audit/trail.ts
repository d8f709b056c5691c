// The trail as the store holds it (decisions §9): `audit verify` (the hash chain, and each
// signed checkpoint with the keys given), `audit query`, `audit checkpoints` and `audit keygen`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditVerification } from '../../../domain/audit/chain-walker.js';
import { type AuditCheckpoint, describeCheckpoint } from '../../../domain/audit/checkpoint.js';
import type { AuditQuery, StoredAuditRecord } from '../../../domain/audit/record.js';
import type { AuditLog } from '../../../ports/audit-log.js';
import {
  CheckpointEvidenceError,
  type Evidence,
  gatherCheckpoints,
} from '../../audit/checkpoint-evidence.js';
import { generateCheckpointKeys } from '../../composition/audit-keys.js';
import { parse, positionals } from '../arguments.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import { ARCHIVE_OPTIONS, keyringOf, noteKeysOf, STORE } from './options.js';

const line = (r: StoredAuditRecord) =>
  `${r.seq}  ${r.at.toISOString()}  ${r.clientId}  ${r.operation}${r.crn ? ` ${r.crn}` : ''}  ${r.status}${r.problem ? ` ${r.problem}` : ''}${r.access ? ` (${r.access})` : ''}${r.issued ? `  issued ${r.issued}` : ''}${r.onBehalfOf ? `  on behalf of ${r.onBehalfOf}` : ''}  ${r.requestId}`;

const checkpointLine = (c: AuditCheckpoint) => `${c.seq}  ${c.time}  key ${c.keyId}  head ${c.head}`;

/**
 * `audit verify`: the hash chain, and with `--public-key` every checkpoint (stored, and in
 * each `--checkpoints` file): its signature, and that the chain passes through its head.
 * Exit 1 names the first thing wrong.
 */
async function verify(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, {
    ...STORE,
    'public-key': { type: 'string', multiple: true },
    checkpoints: { type: 'string', multiple: true },
    origin: { type: 'string' },
  });
  positionals(rest, []);
  const keys = values['public-key'] ?? [];
  const files = values.checkpoints ?? [];
  if (files.length > 0 && keys.length === 0) {
    throw new UsageError(
      '--checkpoints needs --public-key: a checkpoint counts only once its signature is checked',
    );
  }
  const keyring = keys.length > 0 ? await keyringOf(keys) : undefined;
  // The same keys, named by the log's origin, check the checkpoints' notes (decisions §14).
  const noteKeys = keyring === undefined ? [] : noteKeysOf({ 'public-key': keys, origin: values.origin }, io);
  return withAuditStore(values['audit-store'], io, async (log) => {
    if (keyring === undefined) return verifyChainOnly(log, values.json, io);
    let evidence: Evidence;
    try {
      evidence = await gatherCheckpoints(log, files, keyring, noteKeys);
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
    return reportVerification(io, values.json, result, evidence, [], (await log.archivedHead()).seq);
  });
}

async function verifyChainOnly(log: AuditLog, json: boolean | undefined, io: Io): Promise<number> {
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
  const shown = archived > 0 ? { ...result, archivedUpTo: archived } : result;
  report(io, json, newest ? { ...shown, newestCheckpoint: newest } : shown, [
    `audit chain intact: ${result.records} record(s)${checked}`,
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
async function query(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, {
    ...STORE,
    'request-id': { type: 'string' },
    client: { type: 'string' },
    crn: { type: 'string' },
    since: { type: 'string' },
    limit: { type: 'string' },
    ...ARCHIVE_OPTIONS,
  });
  positionals(rest, []);
  const since = values.since === undefined ? undefined : new Date(values.since);
  if (since !== undefined && Number.isNaN(since.getTime()))
    throw new UsageError('--since must be an ISO 8601 date-time, e.g. 2026-11-22T09:00:00Z');
  if (values.limit !== undefined && !/^\d{1,7}$/.test(values.limit))
    throw new UsageError('--limit must be a whole number');
  const filter: AuditQuery = {
    ...(values['request-id'] ? { requestId: values['request-id'] } : {}),
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
  return withAuditStore(values['audit-store'], io, async (log) => show(await log.query(filter)));
}

/** `audit keygen --dir DIR`: a new Ed25519 signing key pair; an existing key is never overwritten. */
async function keygen(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, { dir: { type: 'string' }, json: { type: 'boolean' } });
  positionals(rest, []);
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

/** `audit checkpoints`: the stored checkpoints, lowest seq first; `--json` writes one JSON line each. */
async function checkpoints(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, STORE);
  positionals(rest, []);
  return withAuditStore(values['audit-store'], io, async (log) => {
    let count = 0;
    let bad = 0;
    for await (const read of log.checkpoints()) {
      if ('invalid' in read) {
        bad++;
        io.err(`case-read: ${read.invalid}`);
        continue;
      }
      count++;
      io.out(values.json ? JSON.stringify(read) : checkpointLine(read));
    }
    if (count === 0 && bad === 0 && !values.json) io.out('no checkpoints');
    return bad > 0 ? EXIT.failure : EXIT.ok;
  });
}

export const auditTrailCommands = { verify, query, keygen, checkpoints } as const;
