/**
 * The composition root of `case-read witness` (decisions §19): the witness an oversight body
 * runs, a small process of its own that the case service never loads. Its settings come from
 * the environment, each refusal naming its variable:
 *
 * - `WITNESS_KEY`: the cosigner's private key file (`case-read witness keygen`), refused when
 *   others may read or write it.
 * - `WITNESS_LOGS`: the logs it cosigns, `log <vkey> [<url>]` lines (tlog-policy's).
 * - `WITNESS_STORE`: its record, `sqlite:PATH` or `postgres://…` (several witness processes
 *   may share one PostgreSQL store).
 * - `HOST`, `PORT`: where it listens (127.0.0.1:8443 unless set).
 * - `TLS_CERT`, `TLS_KEY`: its HTTPS certificate and key; plain HTTP only on a loopback HOST,
 *   behind a proxy that ends TLS.
 * - `LOG_LEVEL`: as the service's.
 */
import {
  cosignerFromSkey,
  newCosignerKey,
  writeCosignerKeyFile,
} from '../../adapters/crypto/cosigner-keys.js';
import { verifyNoteSignature } from '../../adapters/crypto/note-keys.js';
import { createLogger } from '../../adapters/pino/logger.js';
import { postgresHop, postgresUrlProblem } from '../../adapters/postgres/url.js';
import { PrometheusWitnessMetrics } from '../../adapters/prometheus/witness-metrics.js';
import { CertificateFileError, certificateAndKey } from '../../adapters/shared/certificates.js';
import { isLoopbackHost } from '../../adapters/shared/loopback.js';
import {
  readNamedFile,
  readNamedFileAsync,
  readSecretFile,
  readSecretFileAsync,
} from '../../adapters/shared/secret-files.js';
import { sha256Bytes } from '../../adapters/shared/sha256.js';
import { fileUrls } from '../../adapters/shared/store-urls.js';
import { TLS_CIPHERS } from '../../adapters/tls-listener/server.js';
import type { WitnessState } from '../../ports/witness-state.js';
import type { NoteVerifier } from '../../tlog/note.js';
import { ConfigError } from '../config-error.js';
import type { WitnessParts } from '../witness/add-checkpoint.js';
import type { WitnessLog } from '../witness/http.js';
import type { WitnessMetrics } from '../witness/metrics.js';
import type { WitnessTls } from '../witness/server.js';
import { parseTrustedLogs } from '../witness/trusted-logs.js';
import { isProduction, isTrustedHop, nodeEnvProblem } from './posture.js';

/** `witness keygen`: a new cosigner key, and how it is written (0600, never over a file). */
export { newCosignerKey, writeCosignerKeyFile };

/** The witness's settings, read from the environment and checked, files not yet read. */
export interface WitnessSettings {
  readonly keyFile: string;
  readonly logsFile: string;
  readonly store: string;
  readonly host: string;
  readonly port: number;
  readonly tls?: { readonly cert: string; readonly key: string };
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The variables `witness serve` reads, for its usage and the docs. */
export const WITNESS_VARIABLES = [
  'WITNESS_KEY',
  'WITNESS_LOGS',
  'WITNESS_STORE',
  'HOST',
  'PORT',
  'TLS_CERT',
  'TLS_KEY',
  'LOG_LEVEL',
] as const;

/** A witness's SQLite file, named as the service's SQLite stores are (one rule for such a path). */
const WITNESS_SQLITE = fileUrls('sqlite:', './data/witness.db');

const STORE_FORMS =
  'sqlite:PATH or postgres://USER@HOST:PORT/DB[?schema=NAME&sslmode=verify-full&sslrootcert=FILE]';

/** Whether `host` (as HOST gives it: an address or a name, IPv6 without brackets) is this machine's loopback. */
const isLoopbackBind = (host: string): boolean => isLoopbackHost(host) || isLoopbackHost(`[${host}]`);

/** What is wrong with WITNESS_STORE, if anything: its form, and in production a database reached off this host unverified. */
function storeProblem(
  store: string | undefined,
  env: Record<string, string | undefined>,
): string | undefined {
  if (store === undefined)
    return `WITNESS_STORE: where the witness keeps what it cosigned is needed: ${STORE_FORMS}`;
  if (WITNESS_SQLITE.recognises(store)) {
    const problem = WITNESS_SQLITE.problem(store);
    return problem === undefined ? undefined : `WITNESS_STORE: ${problem}`;
  }
  if (!/^postgres(ql)?:\/\//.test(store)) return `WITNESS_STORE: expected ${STORE_FORMS}`;
  const problem = postgresUrlProblem(store);
  if (problem !== undefined) return `WITNESS_STORE: ${problem}`;
  const hop = postgresHop(store);
  if (isProduction(env) && !isTrustedHop(hop)) {
    const now = hop.tls === 'none' ? 'plaintext' : 'encrypted but not verified';
    return `WITNESS_STORE: ${hop.to} is reached ${now}, which NODE_ENV=production refuses off this host; ${hop.fix}`;
  }
  return undefined;
}

/**
 * The witness's settings from `env`, or a ConfigError naming every variable at fault: the key,
 * the logs file and the store are needed; the port is a port; TLS_CERT and TLS_KEY go together,
 * and are needed unless HOST is loopback.
 */
export function readWitnessSettings(env: Record<string, string | undefined>): WitnessSettings {
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === '' ? undefined : raw;
  };
  // NODE_ENV read as serve reads it: a near-miss is not taken for development (decisions §20).
  const problems: string[] = [nodeEnvProblem(env)].filter((p): p is string => p !== undefined);
  const keyFile = value('WITNESS_KEY');
  if (keyFile === undefined)
    problems.push(
      "WITNESS_KEY: the witness's private key file is needed (case-read witness keygen writes one)",
    );
  const logsFile = value('WITNESS_LOGS');
  if (logsFile === undefined)
    problems.push('WITNESS_LOGS: the file of the logs to cosign is needed, one "log <vkey>" line each');
  const store = value('WITNESS_STORE');
  const badStore = storeProblem(store, env);
  if (badStore !== undefined) problems.push(badStore);
  const host = value('HOST') ?? '127.0.0.1';
  const rawPort = value('PORT') ?? '8443';
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65535) problems.push('PORT: PORT must be a port number 0..65535');
  const cert = value('TLS_CERT');
  const key = value('TLS_KEY');
  if ((cert === undefined) !== (key === undefined))
    problems.push(`${cert === undefined ? 'TLS_CERT' : 'TLS_KEY'}: TLS_CERT and TLS_KEY go together`);
  else if (cert === undefined && !isLoopbackBind(host))
    problems.push(
      `TLS_CERT: HOST ${host} is not loopback, so the witness serves HTTPS there: set TLS_CERT and TLS_KEY (plain HTTP only on 127.0.0.1, ::1 or localhost, behind a proxy that ends TLS)`,
    );
  const logLevel = value('LOG_LEVEL') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    problems.push(`LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}`);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    keyFile: keyFile as string,
    logsFile: logsFile as string,
    store: store as string,
    host,
    port,
    ...(cert !== undefined && key !== undefined ? { tls: { cert, key } } : {}),
    logLevel: logLevel as WitnessSettings['logLevel'],
  };
}

const refuse = (message: string) => new ConfigError([message]);

/** Most a logs file or a certificate may be: a few dozen lines of keys. */
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * Each file a variable names is read by the shared reader: opened without blocking, a
 * regular file (after symlinks) of a bounded size, judged on the descriptor opened (a FIFO
 * is refused, never waited on); a key refused when others may read or write it.
 */
const readFile = (variable: string, path: string): string =>
  readNamedFile(variable, path, refuse, { maxBytes: MAX_FILE_BYTES });
const readKeyFile = (variable: string, path: string): string =>
  readSecretFile(variable, path, refuse, { maxBytes: MAX_FILE_BYTES });

/** The cosigner of WITNESS_KEY: refused when others may read or write the file, or when it holds no cosigner key. */
function readCosigner(path: string) {
  const text = readKeyFile('WITNESS_KEY', path);
  try {
    return cosignerFromSkey(text);
  } catch (error) {
    throw refuse(`WITNESS_KEY: ${path}: ${(error as Error).message} (case-read witness keygen writes one)`);
  }
}

/** The logs of WITNESS_LOGS, each key able to check its own signatures (Ed25519, node:crypto). */
function readLogs(path: string): ReadonlyMap<string, readonly NoteVerifier[]> {
  const logs = parseTrustedLogs(sha256Bytes, readFile('WITNESS_LOGS', path));
  if ('invalid' in logs) throw refuse(`WITNESS_LOGS: ${path}: ${logs.invalid}`);
  return new Map(
    [...logs].map(([origin, keys]) => [
      origin,
      keys.map((key) => ({
        ...key,
        verify: (m: Uint8Array, s: Uint8Array) => verifyNoteSignature(key, m, s),
      })),
    ]),
  );
}

/** The certificate and key checked: the certificate the key's and valid now. */
function checkedTls(tls: WitnessTls): WitnessTls {
  try {
    certificateAndKey({ cert: 'TLS_CERT', key: 'TLS_KEY' }, tls, new Date());
  } catch (error) {
    if (error instanceof CertificateFileError) throw refuse(error.message);
    throw error;
  }
  return tls;
}

/** The HTTPS certificate and key at start: readable, the key not by others, the certificate the key's and valid now. */
export function readWitnessTls(files: { readonly cert: string; readonly key: string }): WitnessTls {
  return checkedTls({ cert: readFile('TLS_CERT', files.cert), key: readKeyFile('TLS_KEY', files.key) });
}

/** {@link readWitnessTls} at a reload (SIGHUP): the same reads and checks, without blocking the event loop. */
export async function reloadWitnessTls(files: {
  readonly cert: string;
  readonly key: string;
}): Promise<WitnessTls> {
  const cert = await readNamedFileAsync('TLS_CERT', files.cert, refuse, { maxBytes: MAX_FILE_BYTES });
  const key = await readSecretFileAsync('TLS_KEY', files.key, refuse, { maxBytes: MAX_FILE_BYTES });
  return checkedTls({ cert, key });
}

/** Opens WITNESS_STORE, creating its table when missing. */
async function openState(store: string, log: WitnessLog): Promise<WitnessState> {
  if (store.startsWith('sqlite:')) {
    return (await import('../../adapters/sqlite/witness-state.js')).openSqliteWitnessState(
      store.slice('sqlite:'.length),
    );
  }
  const { openPostgresWitnessState } = await import('../../adapters/postgres/witness-state.js');
  return openPostgresWitnessState(store, (error) =>
    log('warn', { err: (error as { code?: string }).code ?? 'connection' }, 'idle database connection lost'),
  );
}

/** A witness ready to listen: its judgement's parts, its listener's TLS, its log and metrics, and what closes it. */
export interface Witness {
  readonly parts: WitnessParts;
  /** Its `GET /metrics`, in a Prometheus registry of its own. */
  readonly metrics: WitnessMetrics;
  readonly vkey: string;
  readonly tls?: WitnessTls;
  readonly ciphers: string;
  readonly log: WitnessLog;
  /** Writes out log lines still buffered. */
  flush(): void;
  close(): Promise<void>;
}

/**
 * The witness of `settings`: its key and logs read and checked, its TLS files too, then its
 * state opened (created if missing); its metrics by the Prometheus adapter. Every refusal is
 * a ConfigError naming the variable (a store that cannot be opened, a StoreError).
 */
export async function buildWitness(settings: WitnessSettings): Promise<Witness> {
  const cosigner = readCosigner(settings.keyFile);
  const logs = readLogs(settings.logsFile);
  const tls = settings.tls === undefined ? undefined : readWitnessTls(settings.tls);
  const logger = createLogger(settings.logLevel).child({ component: 'witness' });
  const log: WitnessLog = (level, fields, message) => logger[level](fields, message);
  const state = await openState(settings.store, log);
  return {
    parts: {
      sha256: sha256Bytes,
      logs,
      state,
      cosigner,
      now: () => Math.floor(Date.now() / 1000),
    },
    metrics: new PrometheusWitnessMetrics(),
    vkey: cosigner.vkey,
    ...(tls !== undefined ? { tls } : {}),
    ciphers: TLS_CIPHERS,
    log,
    flush: () => logger.flush(),
    close: () => state.close(),
  };
}
