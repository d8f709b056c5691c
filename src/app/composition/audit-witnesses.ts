import { cosignerVerifier } from '../../adapters/crypto/cosigner-keys.js';
import type { Logger } from '../../adapters/pino/logger.js';
import type { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import { isLoopbackHost } from '../../adapters/shared/loopback.js';
import { sha256Bytes, sha256Hex } from '../../adapters/shared/sha256.js';
import { httpWitnessClient } from '../../adapters/witness-http/witness-client.js';
import type { AuditLog } from '../../ports/audit-log.js';
import type { CheckpointSigner } from '../../ports/checkpoint-keys.js';
import { StoreError } from '../../ports/stores.js';
import type { WitnessClient } from '../../ports/witnesses.js';
import type { NoteVerifierKey } from '../../tlog/note.js';
import type { WitnessPolicy } from '../../tlog/policy.js';
import { policyProblems } from '../audit/witness-policy.js';
import { type TrailBehind, trailBehindMessage } from '../audit/witness-standing.js';
import { AuditWitnessing, type WitnessingOptions } from '../audit/witnessing.js';
import { type Config, ConfigError } from './config.js';
import { readPem } from './tls-files.js';
import { readWitnessPolicyFile } from './witness-policy-file.js';

/**
 * The witnesses of `serve`'s checkpoints (decisions §19): `AUDIT_WITNESS_POLICY` read and
 * checked at start, and the submitting loop started over the audit store.
 */

/** The least time between two rounds of submissions: at most one checkpoint a second goes to each witness. */
const ROUND_GAP_MS = 1000;

/**
 * `AUDIT_WITNESS_POLICY` read and checked for the trail `signer` signs, when set: its `log`
 * line is this trail's key under `AUDIT_ORIGIN`, each witness has a URL, https off loopback.
 * A ConfigError naming the variable, the file and the line otherwise.
 */
export function readAuditWitnessPolicy(
  config: Config,
  signer: CheckpointSigner | undefined,
): WitnessPolicy | undefined {
  if (config.AUDIT_WITNESS_POLICY === undefined) return undefined;
  return readTrailWitnessPolicy(
    config.AUDIT_WITNESS_POLICY,
    'AUDIT_WITNESS_POLICY',
    config.AUDIT_ORIGIN,
    signer?.note,
  );
}

/**
 * The witness policy in `path` (named by `source`) of the log `origin`, as `serve` needs one:
 * its `log` line is `logKey` (when known), each witness has a URL, https off loopback. A
 * ConfigError naming the source, the file and the line otherwise. `audit continue` reads the
 * policy of the log that goes before so.
 */
export function readTrailWitnessPolicy(
  path: string,
  source: string,
  origin: string,
  logKey: NoteVerifierKey | undefined,
): WitnessPolicy {
  const policy = readWitnessPolicyFile(path, `${source}:`);
  const problems = policyProblems(policy, {
    origin,
    ...(logKey === undefined ? {} : { logVkey: logKey }),
    isLoopback: isLoopbackHost,
    urlRequired: true,
  });
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `${source}: ${path}: ${p}`));
  return policy;
}

/** The witnesses' HTTP client, trusting the CA bundle in `caFile` (AUDIT_WITNESS_TLS_CA) when given. */
const witnessClientOf = (caFile: string | undefined) =>
  httpWitnessClient({ ca: caFile === undefined ? undefined : readPem('AUDIT_WITNESS_TLS_CA', caFile) });

/** The submitting of checkpoints to `policy`'s witnesses over `audit`'s trail, as serve and audit continue make it. */
const witnessingOf = (
  policy: WitnessPolicy,
  audit: AuditLog,
  client: WitnessClient,
  own: Pick<WitnessingOptions, 'timeoutMs' | 'everySeconds' | 'out'>,
): AuditWitnessing =>
  new AuditWitnessing({
    store: audit,
    hashes: { sha256: sha256Bytes, sha256Hex },
    policy,
    client,
    cosignerOf: cosignerVerifier,
    roundGapMs: ROUND_GAP_MS,
    ...own,
  });

/**
 * What the policy's witnesses hold against `audit`'s trail, asked once as `serve` asks at start
 * (for `audit continue`): the quorum that holds what the trail cannot extend, if one does.
 * Nothing is logged or counted; the connections are closed after.
 */
export async function askWitnesses(
  policy: WitnessPolicy,
  audit: AuditLog,
  options: {
    /** The CA bundle's file (AUDIT_WITNESS_TLS_CA), when the witnesses' is not a public one. */
    readonly caFile?: string | undefined;
    readonly timeoutMs: number;
  },
): Promise<TrailBehind | undefined> {
  const client = witnessClientOf(options.caFile);
  const witnessing = witnessingOf(policy, audit, client, {
    timeoutMs: options.timeoutMs,
    everySeconds: 60,
    out: { answered: () => {}, quorum: () => {}, failed: () => {}, behind: () => {} },
  });
  try {
    return await witnessing.probe();
  } finally {
    await client.close();
  }
}

/** The hops `config check` shows for the witnesses: each one's URL. */
export const witnessUrls = (policy: WitnessPolicy | undefined): { name: string; url: string }[] =>
  (policy?.witnesses ?? []).flatMap((w) =>
    w.url === undefined ? [] : [{ name: `witness ${w.name}`, url: w.url }],
  );

/**
 * Sends each checkpoint `serve` stores to the policy's witnesses, keeps their cosignatures,
 * logs and counts every answer; `stop` ends it and closes its connections. Before it starts,
 * every witness is asked what it holds: when a quorum holds what the audit store's trail
 * cannot extend (a store restored short), a `StoreError` saying so, and `serve` does not
 * start. Found while serving, it is logged and counted, and `witnessing.behind` says it
 * (every request is refused from then on: http-app.ts).
 */
export async function startWitnessing(
  config: Config,
  policy: WitnessPolicy,
  audit: AuditLog,
  logger: Logger,
  metrics: Pick<PrometheusMetrics, 'auditWitnesses'>,
): Promise<{ readonly witnessing: AuditWitnessing; stop(): Promise<void>; last(): Promise<void> }> {
  let serving = false;
  const client = witnessClientOf(config.AUDIT_WITNESS_TLS_CA);
  const seen = metrics.auditWitnesses(policy.witnesses.map((w) => w.name));
  const witnessing = witnessingOf(policy, audit, client, {
    timeoutMs: config.AUDIT_WITNESS_TIMEOUT_MS,
    everySeconds: config.AUDIT_CHECKPOINT_SECONDS,
    out: {
      answered: (witness, outcome, detail) => {
        seen.answered(witness.name, outcome);
        const fields = { witness: witness.name, url: witness.url, outcome, ...detail };
        if (outcome === 'refused')
          logger.error(
            fields,
            'audit witness refused the checkpoint: this trail may have been rolled back or forked; see the runbook',
          );
        else if (outcome === 'unreachable')
          logger.warn(fields, 'audit witness unreachable; it will be tried again');
        else
          logger.info(
            fields,
            outcome === 'cosigned' ? 'audit checkpoint cosigned' : 'audit witness holds another size',
          );
      },
      quorum: (newest, met) => seen.quorum(Date.parse(newest.time), met),
      failed: (reason) => logger.error({ reason }, 'audit witnessing failed; it will be tried again'),
      behind: (behind) => {
        seen.behind();
        // Found by the probe at start, it is the StoreError below that says it.
        if (!serving) return;
        logger.error(
          { storeSize: behind.storeSize, heldSize: behind.heldSize, witnesses: behind.witnesses },
          `every request is refused from now on: ${trailBehindMessage(behind)}`,
        );
      },
    },
  });
  const behind = await witnessing.probe().catch((error: unknown) => {
    // The store could not be read for it: serving goes on, as with a round that failed.
    logger.error({ reason: (error as Error).message }, 'audit witnesses could not be asked at start');
    return undefined;
  });
  if (behind !== undefined) {
    await client.close();
    throw new StoreError(`AUDIT_STORE: ${trailBehindMessage(behind)}`);
  }
  serving = true;
  logger.info(
    { witnesses: policy.witnesses.map((w) => w.name), quorum: witnessing.quorumText },
    'audit witnesses on',
  );
  witnessing.start();
  return {
    witnessing,
    stop: () => witnessing.stop(),
    last: async () => {
      await witnessing.stop({ last: true });
      await client.close();
    },
  };
}
