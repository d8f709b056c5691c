// What an auditor checks the trail's proofs against (decisions §14, §19): the log's verifier
// key (`audit vkey`), and its newest signed checkpoint with the cosignatures kept for it
// (`audit checkpoint`).
import { NoteError } from '../../../tlog/note.js';
import { newestNoted } from '../../audit/proving.js';
import { cosignedNote } from '../../audit/witnessed.js';
import { CheckpointKeyError, notePublicKey, noteSigner } from '../../composition/audit-keys.js';
import { auditOriginOf } from '../../composition/config.js';
import { withAuditStore } from '../command-stores.js';
import { CommandError, EXIT, UsageError } from '../exit.js';
import { type Io, report } from '../io.js';
import { proving, readFile, readSigningKey, type StoreGiven } from './options.js';

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
