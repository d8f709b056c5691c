// The audit log's C2SP side that needs no store (decisions §14): `audit vkey`, the verifier key
// an auditor checks checkpoints and proofs with, and `audit verify-proof`, an offline check of
// one entry's tlog-proof against it.
import { existsSync, readFileSync } from 'node:fs';
import { leafHash, verifyInclusion } from '../../domain/audit/merkle.js';
import { NoteError, openNote, parseCheckpointText, parseVerifierKey } from '../../domain/audit/note.js';
import { parseTlogProof } from '../../domain/audit/tlog-proof.js';
import { auditOriginOf } from '../composition/config.js';
import {
  CheckpointKeyError,
  notePublicKey,
  noteSigner,
  sha256Bytes,
  verifyNoteSignature,
} from '../composition/operator.js';
import { parse, positionals } from './arguments.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, report } from './io.js';

/** Most of a file read here: an entry is a record of a few hundred bytes, a proof a few KB. */
const MAX_FILE_BYTES = 1024 * 1024;

function readFile(option: string, path: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new CommandError(`${option} ${path} cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
  if (bytes.length > MAX_FILE_BYTES)
    throw new CommandError(`${option} ${path} is over ${MAX_FILE_BYTES} bytes`);
  return bytes;
}

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
  const pem = readFile(what, path).toString('utf8');
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

/** A verifier key given as the line itself or as a file holding it. */
function verifierKeyOf(given: string) {
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
  return key;
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
  const opened = openNote(proof.checkpoint, [key], verifyNoteSignature);
  if (!opened.ok) throw new CommandError(`the proof's checkpoint: ${opened.reason}`);
  const body = parseCheckpointText(opened.text);
  if ('invalid' in body) throw new CommandError(`the proof's checkpoint: ${body.invalid}`);
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

export const auditProofCommands = { vkey, 'verify-proof': verifyProof } as const;
