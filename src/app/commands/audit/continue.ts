// `audit continue` (ADR 30): a trail its witnesses show short (a store restored from backup, a
// standby promoted behind) goes on as a new log under a new origin, its first new entry a
// signed statement of what was lost.
import { hostname } from 'node:os';
import { signCheckpoint } from '../../../domain/audit/checkpoint.js';
import {
  continuationRecord,
  reasonProblem,
  recordsLost,
  type TrailContinuation,
} from '../../../domain/audit/continuation.js';
import type { AuditLog } from '../../../ports/audit-log.js';
import type { CheckpointSigner } from '../../../ports/checkpoint-keys.js';
import { isNoteName, publicKeyHex, verifierKeyLine } from '../../../tlog/note.js';
import type { WitnessPolicy } from '../../../tlog/policy.js';
import { underArchiveLock } from '../../audit/archive-lock.js';
import { openContinuation, signContinuation } from '../../audit/continuation.js';
import { trailOrigin } from '../../audit/origin.js';
import { recordAt } from '../../audit/proving.js';
import type { TrailBehind } from '../../audit/witness-standing.js';
import {
  auditHashes,
  CheckpointKeyError,
  checkpointSigner,
  noteVerifier,
} from '../../composition/audit-keys.js';
import { askWitnesses, readTrailWitnessPolicy } from '../../composition/audit-witnesses.js';
import { auditOriginOf, auditWitnessTimeoutOf, ConfigError } from '../../composition/config.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import { type PolicyGiven, proving, readSigningKey, type StoreGiven } from './options.js';

export interface ContinueGiven extends StoreGiven, PolicyGiven {
  readonly origin?: string | undefined;
  /** The new log's private key (PEM). */
  readonly key?: string | undefined;
  readonly reason?: string | undefined;
}

/** The private key in `path` (named by `source`, refused when others may read it) as the checkpoint signer of `origin`. */
async function signerOf(source: string, path: string, origin: string): Promise<CheckpointSigner> {
  const pem = readSigningKey(path, source).toString('utf8');
  try {
    return await checkpointSigner(pem, origin);
  } catch (error) {
    if (error instanceof CheckpointKeyError) throw new CommandError(`${source}: ${path}: ${error.message}`);
    throw error;
  }
}

/** The keys of the log before (AUDIT_SIGNING_KEY) and of the new log (`--key`), which must differ. */
async function keysOf(io: Io, values: ContinueGiven, previous: string, origin: string) {
  const keyPath = io.env.AUDIT_SIGNING_KEY;
  if (!keyPath)
    throw new UsageError(
      "audit continue signs the statement with the key of the log before as well as the new one: set AUDIT_SIGNING_KEY (the log before's)",
    );
  if (values.key === undefined)
    throw new UsageError(
      "--key names the new log's private key (case-read audit keygen): a new log has a key of its own, as witnesses know a log by its key",
    );
  const before = await signerOf('AUDIT_SIGNING_KEY', keyPath, previous);
  const after = await signerOf('--key', values.key, origin);
  if (publicKeyHex(before.note) === publicKeyHex(after.note))
    throw new UsageError(
      `--key ${values.key} is the key of the log before (AUDIT_SIGNING_KEY): a new log has a key of its own (case-read audit keygen)`,
    );
  return { before, after };
}

/** The witness policy of the log that goes before (`--policy`, else AUDIT_WITNESS_POLICY): its `log` line is that log's key. */
function previousPolicy(
  values: PolicyGiven,
  io: Io,
  previous: CheckpointSigner,
): { policy: WitnessPolicy; source: string } {
  const path = values.policy ?? io.env.AUDIT_WITNESS_POLICY;
  const source = values.policy !== undefined ? '--policy' : 'AUDIT_WITNESS_POLICY';
  if (!path)
    throw new UsageError(
      "audit continue asks the trail's witnesses what was lost: give --policy FILE (the policy of the log that goes before) or set AUDIT_WITNESS_POLICY",
    );
  try {
    return {
      policy: readTrailWitnessPolicy(path, source, previous.note.name, previous.note),
      source: `${source} ${path}`,
    };
  } catch (error) {
    if (error instanceof ConfigError) throw new CommandError(error.problems.join('; '));
    throw error;
  }
}

/** Why the witnesses' answers do not allow a continuation, or undefined when they do. */
function refusal(behind: TrailBehind | undefined, size: number, source: string): string | undefined {
  if (behind === undefined)
    return `the witnesses of ${source} hold nothing more than this store's trail (${size} records), or too few of them answered to make its quorum: nothing is shown lost, so the trail is not continued (serve needs no continuation)`;
  const forked = behind.witnesses.filter((w) => w.standing.kind === 'forked');
  if (forked.length > 0)
    return `${forked.map((w) => `${w.name} holds ${w.standing.holds} records of another tree`).join(', ')}: this store's trail is not a shorter copy of what they hold (records were written to it after it was restored, or it is another trail), and a continuation states only the loss of a trail's last records; restore the store again from its backup, with nothing appended since`;
  return undefined;
}

/**
 * `audit continue --origin NEW --reason TEXT [--policy FILE]`: asks the witnesses of the trail's
 * log what they hold; when a quorum holds more records than the store's trail, appends the
 * continuation record (the statement signed with AUDIT_SIGNING_KEY under NEW) and the first
 * checkpoint under NEW, and prints what was lost. The only way a trail's origin changes.
 */
export async function continueTrail(values: ContinueGiven, io: Io): Promise<number> {
  const origin = values.origin;
  if (origin === undefined || !isNoteName(origin))
    throw new UsageError(
      '--origin names the new log: a log name without spaces or +, e.g. case-read.prod.example.org/audit-2',
    );
  const reason = values.reason ?? '';
  const problem = reasonProblem(reason);
  if (problem !== undefined) throw new UsageError(`--reason says why the trail lost records: ${problem}`);
  return withAuditStore(values.auditStore, io, async (log) => {
    const previous = await trailOrigin(log);
    if (previous === undefined)
      throw new CommandError(
        'the audit store holds no signed checkpoint of its tree: there is no log to continue, and nothing its witnesses could be asked about',
      );
    const given = io.env.AUDIT_ORIGIN !== undefined ? auditOriginOf(io.env) : undefined;
    if (given !== undefined && given !== previous)
      throw new CommandError(
        `AUDIT_ORIGIN names ${given}, but this trail's newest checkpoint names ${previous}: audit continue is run with the configuration of the log that goes before`,
      );
    if (origin === previous)
      throw new UsageError(`--origin ${origin} is the trail's origin now: a continuation is a new log`);
    const { before, after } = await keysOf(io, values, previous, origin);
    const { policy, source } = previousPolicy(values, io, before);
    const who = `${hostname()} pid ${process.pid} (audit continue)`;
    return proving(() =>
      underArchiveLock(log, who, async () => {
        const grown = await log.growTree();
        const kept = grown.size;
        if ((await log.head()).seq !== kept)
          throw new CommandError(
            'records were appended to the trail while it was read: stop every serve of this trail, then run audit continue again',
          );
        const behind = await askWitnesses(policy, log, {
          caFile: io.env.AUDIT_WITNESS_TLS_CA || undefined,
          timeoutMs: auditWitnessTimeoutOf(io.env),
        });
        const refused = refusal(behind, kept, source);
        if (refused !== undefined || behind === undefined) throw new CommandError(refused ?? 'nothing lost');
        const continuation: TrailContinuation = {
          origin,
          vkey: vkeyOf(after),
          previous,
          previousVkey: vkeyOf(before),
          kept,
          held: behind.heldSize,
          lastKept: kept === 0 ? null : (await recordAt(log, kept)).record.at,
          broke: new Date(),
          reason,
        };
        await appendContinuation(log, continuation, after, before);
        report(
          io,
          values.json,
          {
            origin,
            previous,
            kept,
            held: continuation.held,
            lost: recordsLost(continuation),
            lastKept: continuation.lastKept?.toISOString() ?? null,
            break: continuation.broke.toISOString(),
            witnesses: behind.witnesses.map((w) => ({ name: w.name, holds: w.standing.holds })),
            vkey: continuation.vkey,
          },
          continuedLines(continuation, behind),
        );
        return EXIT.ok;
      }),
    );
  });
}

/**
 * The continuation record appended at `kept + 1`, read back and opened, then the first
 * checkpoint under the new origin, and the witnesses' sizes set to none: for the new log each
 * holds nothing yet.
 */
async function appendContinuation(
  log: AuditLog,
  continuation: TrailContinuation,
  signer: CheckpointSigner,
  previous: CheckpointSigner,
): Promise<void> {
  const note = signContinuation(continuation, signer.note, previous.note);
  await log.append(continuationRecord(continuation, note, crypto.randomUUID()));
  await log.flush();
  const { record } = await recordAt(log, continuation.kept + 1);
  // What the store holds at kept + 1 must be this statement, signed: nothing else went in between.
  const opened = openContinuation(record, [noteVerifier(signer.note)], auditHashes.sha256);
  if (record.continuation !== note || opened.origin !== continuation.origin)
    throw new CommandError(
      `record ${continuation.kept + 1} is not the continuation just appended: another writer appended meanwhile; run audit verify`,
    );
  const grown = await log.growTree();
  if (grown.root === undefined || grown.size !== continuation.kept + 1)
    throw new CommandError(
      `the tree did not grow to the continuation record (${grown.size} records): run audit verify`,
    );
  await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  for (const vkey of (await log.witnessSizes()).keys()) await log.saveWitnessSize(vkey, 0);
}

/** A signer's verifier key line (NAME+KEYID+KEY). */
const vkeyOf = (signer: CheckpointSigner) =>
  verifierKeyLine(auditHashes.sha256, signer.note.name, signer.note.publicKey);

function continuedLines(c: TrailContinuation, behind: TrailBehind): string[] {
  const lost = recordsLost(c);
  return [
    `the trail goes on as ${c.origin}: record ${c.kept + 1} states the loss, signed, and the first checkpoint under ${c.origin} is stored`,
    `kept ${c.kept} records of ${c.previous}; its witnesses held ${c.held} (${behind.witnesses.map((w) => `${w.name} ${w.standing.holds}`).join(', ')}): ${lost} record${lost === 1 ? '' : 's'} lost, written between ${c.lastKept?.toISOString() ?? "the trail's start"} and ${c.broke.toISOString()}`,
    `the new log's verifier key: ${c.vkey}`,
    `next: on every instance set AUDIT_ORIGIN=${c.origin} and AUDIT_SIGNING_KEY to the new key; give each witness the new log's verifier key, and serve with a policy whose log line is that key; tell the DPO (docs/operations/runbook.md#casereadauditstorebehindwitnesses)`,
  ];
}
