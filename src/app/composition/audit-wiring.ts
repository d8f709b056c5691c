import { CheckpointKeyError, checkpointSigner } from '../../adapters/crypto/checkpoint-keys.js';
import type { Logger } from '../../adapters/pino/logger.js';
import type { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import type { AuditCheckpoint } from '../../domain/audit/checkpoint.js';
import type { AuditLog, AuditWriter } from '../../ports/audit-log.js';
import type { CheckpointSigner } from '../../ports/checkpoint-keys.js';
import type { NoteVerifier } from '../../tlog/note.js';
import { AuditCheckpointing } from '../audit/checkpointing.js';
import { OriginMismatchError, requireTrailOrigin } from '../audit/origin.js';
import { configured } from '../config-error.js';
import { notePublicKey, readRegularFileSync } from './audit-keys.js';
import { type Config, ConfigError } from './config.js';
import { readKey } from './tls-files.js';

/**
 * The audit trail's wiring in `serve`: the checkpoints' signing key (read and checked as
 * `config check` reads it too), the checkpoints taken while serving, and the writer the
 * requests append through.
 */

/**
 * The signer of the audit checkpoints, when `AUDIT_SIGNING_KEY` names one: read and checked
 * (an Ed25519 private key, in a file not readable by others). Throws a ConfigError naming
 * the variable, never the key.
 */
export async function readAuditSigner(config: Config): Promise<CheckpointSigner | undefined> {
  if (config.AUDIT_SIGNING_KEY === undefined) return undefined;
  const pem = readKey('AUDIT_SIGNING_KEY', config.AUDIT_SIGNING_KEY);
  try {
    return await checkpointSigner(pem, config.AUDIT_ORIGIN);
  } catch (error) {
    if (error instanceof CheckpointKeyError)
      throw new ConfigError([`AUDIT_SIGNING_KEY: ${config.AUDIT_SIGNING_KEY}: ${error.message}`]);
    throw error;
  }
}

/**
 * The public halves of the keys `AUDIT_SIGNING_KEY` replaced (`AUDIT_PREVIOUS_PUBLIC_KEYS`),
 * as note keys of the log's origin: what they signed before a rotation still opens. A
 * ConfigError naming the variable and the file when one is not an Ed25519 public key.
 */
export function readPreviousKeys(config: Config): NoteVerifier[] {
  return config.AUDIT_PREVIOUS_PUBLIC_KEYS.map((path) => {
    const pem = readRegularFileSync(
      'AUDIT_PREVIOUS_PUBLIC_KEYS',
      path,
      (message) => new ConfigError([message]),
      {
        maxBytes: 64 * 1024,
      },
    ).bytes.toString('utf8');
    return configured(`AUDIT_PREVIOUS_PUBLIC_KEYS: ${path}`, () => notePublicKey(pem, config.AUDIT_ORIGIN));
  });
}

/**
 * Refuses to sign under an `AUDIT_ORIGIN` other than the one the trail's newest checkpoint
 * names (decisions §18): a log keeps its origin for life. A ConfigError naming both.
 */
export async function checkTrailOrigin(config: Config, audit: AuditLog): Promise<void> {
  try {
    await requireTrailOrigin(audit, config.AUDIT_ORIGIN, 'AUDIT_ORIGIN');
  } catch (error) {
    if (error instanceof OriginMismatchError) throw new ConfigError([error.message]);
    throw error;
  }
}

/**
 * Checkpoints of the audit chain, taken by this instance (decisions §9): logged, stored,
 * and made visible as metrics. Started at once; `stop` takes the last one.
 */
export function startCheckpointing(
  config: Config,
  signer: CheckpointSigner,
  audit: AuditLog,
  logger: Logger,
  metrics: Pick<PrometheusMetrics, 'auditCheckpoints'>,
  /** Called once each checkpoint is stored: the witnesses are sent it (decisions §19). */
  stored?: (checkpoint: AuditCheckpoint) => void,
): AuditCheckpointing {
  const seen = metrics.auditCheckpoints();
  const checkpointing = new AuditCheckpointing({
    store: audit,
    signer,
    everyRecords: config.AUDIT_CHECKPOINT_RECORDS,
    everySeconds: config.AUDIT_CHECKPOINT_SECONDS,
    now: () => new Date(),
    out: {
      signed: (checkpoint) => {
        seen.signed();
        logger.info({ checkpoint }, 'audit checkpoint');
      },
      observed: (head, newest) => seen.observed(head.seq, newest),
      ...(stored === undefined ? {} : { stored }),
      failed: (reason) => {
        seen.failed();
        logger.error({ reason }, 'audit checkpoint failed; it will be tried again');
      },
      contradicted: (head, newest) =>
        logger.error(
          { headSeq: head.seq, checkpointSeq: newest.seq },
          'the audit trail ends before its newest checkpoint: records were removed; run case-read audit verify',
        ),
    },
  });
  logger.info(
    {
      keyId: signer.keyId,
      everyRecords: config.AUDIT_CHECKPOINT_RECORDS,
      everySeconds: config.AUDIT_CHECKPOINT_SECONDS,
    },
    'audit checkpoints on',
  );
  checkpointing.start();
  return checkpointing;
}

/**
 * The audit writer the requests use: each record counted for the checkpoints as it is
 * handed to the store (no promise of its own on the request path; the checkpoint reads the
 * head the store has committed, whatever the count).
 */
export const countedFor = (writer: AuditWriter, checkpointing: AuditCheckpointing): AuditWriter => ({
  append: (record, deadline) => {
    checkpointing.appended();
    return writer.append(record, deadline);
  },
});
