// What the audit commands share: their options, the files they read, the keys a checkpoint is
// checked with, and how a question the trail cannot answer becomes a command error. One home,
// so each command file holds only its commands.
import { existsSync } from 'node:fs';
import type { AuditLog } from '../../../ports/audit-log.js';
import { StoreError } from '../../../ports/stores.js';
import { MerkleError } from '../../../tlog/merkle.js';
import { NoteError, type NoteVerifier, parseVerifierKey } from '../../../tlog/note.js';
import { AuditArchiveError } from '../../audit/archive.js';
import { ArchiveBusyError } from '../../audit/archive-lock.js';
import { ContinuationError } from '../../audit/continuation.js';
import { OriginMismatchError, requireTrailOrigin } from '../../audit/origin.js';
import { AuditProofError } from '../../audit/proving.js';
import { type PolicyCheck, requireTrailLog, WitnessPolicyError } from '../../audit/witnessed.js';
import {
  CheckpointKeyError,
  checkpointKeyring,
  notePublicKey,
  noteSigner,
  noteVerifier,
  readRegularFileSync,
  readSecretFile,
  sha256Bytes,
} from '../../composition/audit-keys.js';
import { auditOriginOf, ConfigError } from '../../composition/config.js';
import { cosignerVerifier, readWitnessPolicyFile } from '../../composition/witness-policy-file.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import type { Io, JsonGiven } from '../io.js';

/** The store an audit command reads (`--audit-store`, else `AUDIT_STORE`), and JSON output. */
export interface StoreGiven extends JsonGiven {
  readonly auditStore?: string | undefined;
}

/**
 * `--policy FILE`: a C2SP tlog-policy of witnesses (decisions §19); a checkpoint counts only
 * once a quorum of them cosigned it.
 */
export interface PolicyGiven {
  readonly policy?: string | undefined;
}

/**
 * The witness policy of `--policy FILE`, read (as `serve` reads AUDIT_WITNESS_POLICY) before
 * any store is opened: a file that cannot be read or is not a policy is a command error naming
 * it and the line. Undefined when no `--policy` was given.
 */
export function policyCheckOf(path: string | undefined): PolicyCheck | undefined {
  if (path === undefined) return undefined;
  try {
    return {
      policy: readWitnessPolicyFile(path, '--policy'),
      verifierOf: cosignerVerifier,
      source: `--policy ${path}`,
    };
  } catch (error) {
    if (error instanceof ConfigError) throw new CommandError(error.problems.join('; '));
    throw error;
  }
}

/**
 * `--policy FILE` read as {@link policyCheckOf} reads it, and refused unless it is the policy of
 * the trail `keys` open (one of them a `log` line of it, as `serve` requires): a command error
 * naming the line, before any store is opened. Undefined when no `--policy` was given.
 */
export async function trailPolicyOf(
  path: string | undefined,
  keys: readonly NoteVerifier[],
): Promise<PolicyCheck | undefined> {
  const check = policyCheckOf(path);
  if (check !== undefined) await proving(async () => requireTrailLog(check, keys));
  return check;
}

/** Most of a file read here: an entry is a record of a few hundred bytes, a proof or a key a few KB. */
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * A file an option (or a variable, `NAME:`) names, read whole: a regular file (a FIFO or a
 * directory is refused, never waited on), at most 1 MiB; one that cannot be read is a command
 * error naming it.
 */
export const readFile = (option: string, path: string): Buffer =>
  readRegularFileSync(option, path, (message) => new CommandError(message), { maxBytes: MAX_FILE_BYTES })
    .bytes;

/**
 * `AUDIT_SIGNING_KEY`'s file (or another signing key's, named by `source`: `audit continue
 * --key`), read as {@link readFile} reads one, and refused when others can read or write it, as
 * `serve` refuses it.
 */
export const readSigningKey = (path: string, source = 'AUDIT_SIGNING_KEY'): Buffer =>
  Buffer.from(
    readSecretFile(source, path, (message) => new CommandError(message), {
      maxBytes: MAX_FILE_BYTES,
    }),
  );

/** A verifier key given as the line itself or as a file holding it. */
export function verifierKeyOf(given: string): NoteVerifier {
  const isFile = existsSync(given);
  const line = isFile ? (readFile('--vkey', given).toString('utf8').split('\n')[0] ?? '') : given;
  const key = parseVerifierKey(sha256Bytes, line);
  if ('invalid' in key) {
    throw new CommandError(
      isFile
        ? `--vkey ${given}: ${key.invalid}`
        : `--vkey is neither a file nor a verifier key: ${key.invalid}`,
    );
  }
  return noteVerifier(key);
}

/**
 * The keys a checkpoint note is checked with (decisions §14): a verifier key (`--vkey`), line
 * or file, or public-key PEM files (`--public-key`, any number) with the log's origin (`--origin`).
 */
export interface NoteKeysGiven {
  /** One verifier key, or (`audit verify`'s, repeated) the keys of each log a continued trail had. */
  readonly vkey?: string | readonly string[] | undefined;
  readonly publicKey?: readonly string[] | undefined;
  readonly origin?: string | undefined;
}

/** An archive to read instead of the store (`--archive DIR`), and the keys its checkpoint is checked with. */
export interface ArchiveGiven extends NoteKeysGiven {
  readonly archive?: string | undefined;
}

/** The verifier keys given, as a list. */
const vkeysOf = (given: string | readonly string[]): readonly string[] =>
  typeof given === 'string' ? [given] : given;

/**
 * The note keys a checkpoint is checked with: `--vkey` (a line or a file), else each
 * `--public-key` PEM, else `AUDIT_SIGNING_KEY`'s public half, named by `--origin`, else
 * `AUDIT_ORIGIN`, else its default. None given is a usage error: what cannot be checked is refused.
 */
export function noteKeysOf(given: NoteKeysGiven, io: Io): NoteVerifier[] {
  if (given.vkey !== undefined) return vkeysOf(given.vkey).map(verifierKeyOf);
  const publicKeys = given.publicKey;
  const origin = given.origin ?? auditOriginOf(io.env);
  const signingKey = !publicKeys?.length ? io.env.AUDIT_SIGNING_KEY : undefined;
  const paths = publicKeys?.length ? publicKeys : signingKey ? [signingKey] : [];
  if (paths.length === 0) {
    throw new UsageError(
      'a checkpoint is checked with a key: give --vkey, or --public-key (with --origin), or set AUDIT_SIGNING_KEY',
    );
  }
  return paths.map((path) => {
    const pem = (signingKey ? readSigningKey(path) : readFile('--public-key', path)).toString('utf8');
    try {
      return /PRIVATE KEY/.test(pem) ? noteSigner(pem, origin) : notePublicKey(pem, origin);
    } catch (error) {
      if (error instanceof CheckpointKeyError)
        throw new CommandError(`--public-key ${path}: ${error.message}`);
      if (error instanceof NoteError) throw new UsageError(`--origin: ${error.message}`);
      throw error;
    }
  });
}

/** The public keys of `audit verify --public-key` as a keyring of the hash chain's checkpoints, read and checked before the store is opened. */
export async function keyringOf(paths: readonly string[]) {
  const files = paths.map((path) => ({ path, pem: readFile('--public-key', path).toString('utf8') }));
  try {
    return await checkpointKeyring(files);
  } catch (error) {
    if (error instanceof CheckpointKeyError) throw new CommandError(`--public-key ${error.message}`);
    throw error;
  }
}

/**
 * Runs a question of the tree or the archive: what it cannot answer (or a store refuses) is a
 * command error naming why.
 */
export async function proving<T>(question: () => Promise<T>): Promise<T> {
  try {
    return await question();
  } catch (error) {
    if (error instanceof ArchiveBusyError) throw new CommandError(error.message, EXIT.busy);
    if (
      error instanceof AuditProofError ||
      error instanceof OriginMismatchError ||
      error instanceof ContinuationError ||
      error instanceof MerkleError ||
      error instanceof AuditArchiveError ||
      error instanceof WitnessPolicyError ||
      error instanceof StoreError
    )
      throw new CommandError(error.message);
    throw error;
  }
}

const WHOLE = /^[1-9][0-9]{0,15}$/;

/** An option that names a record number or a tree size (1 or more). */
export function wholeOption(name: string, value: string): number {
  if (!WHOLE.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${name} must be a record number (1 or more), not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * Refuses a command whose log origin differs from the one the trail's newest checkpoint names
 * (decisions §18): the origin of `--vkey`, else `--origin`, else `AUDIT_ORIGIN` (its default
 * when `AUDIT_SIGNING_KEY` is set); nothing given, nothing compared. A command error naming both.
 */
export async function sameOriginAsTrail(
  log: Pick<AuditLog, 'newestCheckpoint'>,
  given: Pick<NoteKeysGiven, 'vkey' | 'origin'>,
  io: Io,
): Promise<void> {
  const named =
    given.vkey !== undefined
      ? { origin: verifierKeyOf(vkeysOf(given.vkey)[0] ?? '').name, source: '--vkey' }
      : given.origin !== undefined
        ? { origin: given.origin, source: '--origin' }
        : io.env.AUDIT_ORIGIN !== undefined || io.env.AUDIT_SIGNING_KEY !== undefined
          ? { origin: auditOriginOf(io.env), source: 'AUDIT_ORIGIN' }
          : undefined;
  if (named !== undefined) await proving(() => requireTrailOrigin(log, named.origin, named.source));
}
