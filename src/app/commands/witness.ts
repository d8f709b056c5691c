// `case-read witness keygen` and `case-read witness serve` (decisions §19): the C2SP
// tlog-witness an oversight body runs to cosign a log's checkpoints. Loaded only when a
// witness command runs: `serve`, the case service, never loads any of it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildWitness,
  newCosignerKey,
  readWitnessSettings,
  reloadWitnessTls,
  writeCosignerKeyFile,
} from '../composition/witness.js';
import { ConfigError } from '../config-error.js';
import { witnessHandler } from '../witness/http.js';
import { startWitnessServer } from '../witness/server.js';
import { usage } from './arguments.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, report } from './io.js';

/** The name of the key file `keygen` writes in its directory. */
export const WITNESS_KEY_FILE = 'witness-key';

/** How long requests in progress may take to finish once the witness is told to stop. */
const SHUTDOWN_GRACE_MS = 5000;

/**
 * `witness keygen --name NAME --dir DIR`: a new cosigner key (Ed25519, cosignature/v1) in
 * DIR/witness-key, mode 0600, never over an existing file; the last line printed is the
 * witness's verifier key, for the logs' policies.
 */
export async function keygen(
  values: { name: string; dir: string; json?: boolean | undefined },
  io: Io,
): Promise<number> {
  if (values.dir === '') throw new UsageError('--dir needs a directory');
  const name = values.name;
  const { skey, vkey } = usage(() => newCosignerKey(name));
  const path = join(values.dir, WITNESS_KEY_FILE);
  try {
    mkdirSync(values.dir, { recursive: true, mode: 0o700 });
    writeCosignerKeyFile(path, skey);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CommandError(
      code === 'EEXIST'
        ? `${path} exists: a key is never overwritten (a new witness key is a new witness: write it to another directory)`
        : `${path} cannot be written (${code ?? (error as Error).message})`,
    );
  }
  report(io, values.json, { key: path, vkey }, [
    `private key: ${path} (mode 0600: for WITNESS_KEY, nowhere else)`,
    "verifier key (the witness line of each log's policy names it; also printed by witness serve at start):",
    vkey,
  ]);
  return EXIT.ok;
}

/** Resolves with the first of SIGTERM and SIGINT. */
const stopSignal = (): Promise<string> =>
  new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });

/**
 * `witness serve`: answers `POST /add-checkpoint` (tlog-witness v1.0.0), `GET /health` and
 * `GET /metrics` until SIGTERM or SIGINT; SIGHUP reads TLS_CERT and TLS_KEY again.
 */
export async function serve(io: Io): Promise<number> {
  const settings = readWitnessSettings(io.env);
  const witness = await buildWitness(settings);
  const server = await startWitnessServer(witnessHandler(witness.parts, witness.metrics, witness.log), {
    host: settings.host,
    port: settings.port,
    ciphers: witness.ciphers,
    ...(witness.tls !== undefined ? { tls: witness.tls } : {}),
  }).catch(async (error: unknown) => {
    await witness.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new ConfigError([`PORT: ${settings.host}:${settings.port} cannot be bound (${code})`]);
    throw error;
  });
  witness.log(
    'info',
    {
      url: server.url,
      vkey: witness.vkey,
      logs: [...witness.parts.logs.keys()],
      store: witness.parts.state.description,
    },
    'listening',
  );
  witness.flush();
  const reloadTls = async () => {
    if (settings.tls === undefined || server.setTls === undefined) return;
    try {
      server.setTls(await reloadWitnessTls(settings.tls));
      witness.log('info', {}, 'TLS files reloaded');
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : [(error as Error).message];
      witness.log('error', { problems }, 'TLS files refused on reload; the ones in use are kept');
    }
  };
  const reload = () => void reloadTls();
  process.on('SIGHUP', reload);
  const signal = await stopSignal();
  process.off('SIGHUP', reload);
  witness.log('info', { signal }, 'shutdown: closing the listener');
  await server.close(SHUTDOWN_GRACE_MS);
  await witness.close();
  witness.log('info', {}, 'shutdown: stopped');
  witness.flush();
  return EXIT.ok;
}
