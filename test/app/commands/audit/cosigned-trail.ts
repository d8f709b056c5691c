import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../../../src/adapters/crypto/checkpoint-keys.js';
import {
  type CosignerSigner,
  cosignerFromSkey,
  newCosignerKey,
} from '../../../../src/adapters/crypto/cosigner-keys.js';
import { notePublicKey } from '../../../../src/adapters/crypto/note-keys.js';
import { SqliteAuditLog } from '../../../../src/adapters/sqlite/audit-log.js';
import { main } from '../../../../src/app/cli.js';
import type { Io } from '../../../../src/app/commands/io.js';
import { type AuditCheckpoint, signCheckpoint } from '../../../../src/domain/audit/checkpoint.js';
import { cosignatureLine } from '../../../../src/tlog/cosignature.js';
import { noteTextOf } from '../../../../src/tlog/note.js';
import { auditRecord } from '../../../contract/audit-log.contract.js';

/**
 * Trails whose checkpoints witnesses cosigned (decisions §19), for the audit commands' tests:
 * a SQLite trail grown to each planned size, a checkpoint signed there with the log's key, and
 * the planned witnesses' cosignature lines over its note kept with it (addCosignatures), as
 * `serve` keeps what its witnesses answer.
 */

export const ORIGIN = 'case-read.test.example/audit';

/** The log's key, written under `dir`: its PEM files, its verifier key (and a file of it), its signer. */
export async function logKeys(dir: string) {
  const keys = await generateCheckpointKeys();
  const privateKey = join(dir, 'audit-signing-key.pem');
  const publicKey = join(dir, 'audit-signing-key.pub.pem');
  writeFileSync(privateKey, keys.privatePem, { mode: 0o600 });
  writeFileSync(publicKey, keys.publicPem);
  const vkey = notePublicKey(keys.publicPem, ORIGIN).vkey;
  const vkeyFile = join(dir, 'audit.vkey');
  writeFileSync(vkeyFile, `${vkey}\n`);
  return { privateKey, publicKey, vkey, vkeyFile, signer: await checkpointSigner(keys.privatePem, ORIGIN) };
}

export type LogKeys = Awaited<ReturnType<typeof logKeys>>;

/** A witness: its cosigner key (private, to cosign with here) under `witness.test/NAME`. */
export const witness = (name: string): CosignerSigner =>
  cosignerFromSkey(newCosignerKey(`witness.test/${name}`).skey);

/**
 * A policy file under `dir`: the log's key, each witness named by the last part of its key's
 * name, and a group of `k` of them as the quorum (`k` = "none": `quorum none`).
 */
export function policyFile(
  dir: string,
  name: string,
  logVkey: string,
  witnesses: readonly CosignerSigner[],
  k: number | 'none' = 2,
): string {
  const names = witnesses.map((w) => w.name.split('/').at(-1) as string);
  const lines = [
    '# the trail and its witnesses',
    `log ${logVkey}`,
    ...witnesses.map((w, i) => `witness ${names[i]} ${w.vkey} https://${names[i]}.witness.test`),
    ...(k === 'none' ? ['quorum none'] : [`group witnesses ${k} ${names.join(' ')}`, 'quorum witnesses']),
  ];
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/**
 * What a test file of witnessed trails is set up with, once: a temporary directory (removed
 * after the file's tests), the log's keys in it, three witnesses (w1, w2, w3), a policy of any 2
 * of them (`policy`), and a SQLite store by name in the directory. Awaited at the file's top.
 */
export async function witnessedSetting(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const keys = await logKeys(dir);
  const w1 = witness('w1');
  const w2 = witness('w2');
  const w3 = witness('w3');
  return {
    dir,
    keys,
    w1,
    w2,
    w3,
    policy: policyFile(dir, 'policy', keys.vkey, [w1, w2, w3]),
    /** The store `sqlite:DIR/NAME.db`. */
    storeAt: (name: string) => `sqlite:${join(dir, `${name}.db`)}`,
  };
}

/** One cosignature line (no newline) by `by` over the checkpoint `note`, at `time` (seconds). */
export const cosign = (by: CosignerSigner, note: string, time = Math.floor(Date.now() / 1000)): string =>
  cosignatureLine(by, noteTextOf(note) as string, time).trimEnd();

/** A checkpoint planned: at `size` records, signed at `at`, cosigned by `by`. */
export interface Planned {
  readonly size: number;
  readonly by: readonly CosignerSigner[];
  readonly at?: Date;
  /** Lines kept beside the witnesses', e.g. a forged one. */
  readonly extra?: (note: string) => readonly string[];
}

/**
 * A SQLite trail at `path` of `records` records (the largest planned size unless more), with a
 * checkpoint at each planned size; the checkpoints as stored, their cosignatures with them.
 */
export async function cosignedTrail(
  path: string,
  keys: LogKeys,
  plan: readonly Planned[],
  records = Math.max(...plan.map((p) => p.size)),
): Promise<AuditCheckpoint[]> {
  const log = SqliteAuditLog.open(path);
  const made: AuditCheckpoint[] = [];
  let appended = 0;
  try {
    for (const planned of plan) {
      while (appended < planned.size) void log.append(auditRecord(++appended));
      await log.flush();
      const grown = await log.growTree();
      const checkpoint = signCheckpoint(grown.head, planned.at ?? new Date(), keys.signer, grown.root);
      await log.saveCheckpoint(checkpoint);
      const note = checkpoint.note as string;
      const lines = [...planned.by.map((w) => cosign(w, note)), ...(planned.extra?.(note) ?? [])];
      if (lines.length > 0) await log.addCosignatures(checkpoint, lines);
      made.push({ ...checkpoint, ...(lines.length > 0 ? { cosignatures: lines } : {}) });
    }
    while (appended < records) void log.append(auditRecord(++appended));
    await log.flush();
    await log.growTree();
  } finally {
    log.close();
  }
  return made;
}

/** Runs the CLI (src/, in this process) with `env`: its exit status and what it wrote. */
export async function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    out: (line) => {
      stdout += `${line}\n`;
    },
    err: (line) => {
      stderr += `${line}\n`;
    },
    env: { PATH: process.env.PATH ?? '', ...env },
    stderrIsTty: false,
  };
  const status = await main(args, io);
  return { status, stdout, stderr };
}
