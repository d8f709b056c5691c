import { execFile } from 'node:child_process';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);

/** PEM text, or the path of a file holding it. */
export type PemOrPath = string;

export interface OwnTlsPostgresOptions {
  /** The server's certificate (chain), PEM or a path. */
  readonly cert: PemOrPath;
  /** The server certificate's private key, PEM or a path. */
  readonly key: PemOrPath;
  /**
   * The CA bundle that verifies client certificates (`ssl_ca_file`), PEM or a path. With it
   * the server asks for a client certificate; it requires one only with `clientCert`.
   */
  readonly clientCa?: PemOrPath;
  /**
   * Requires a client certificate on every TCP connection (`hostssl … trust clientcert=…`):
   * `verify-ca` checks its chain against `clientCa`; `verify-full` also requires its CN to be
   * the database user (`root`). Needs `clientCa`.
   */
  readonly clientCert?: 'verify-ca' | 'verify-full';
  /** The database created for the test; `test` unless told. */
  readonly database?: string;
}

/** A PKI as `makeTestPki` makes it: the CA that issued the server certificate, and that certificate. */
export interface PkiLike {
  readonly ca: { readonly certPem: string };
  readonly server: { readonly certPem: string; readonly keyPem: string };
}

/** The superuser initdb makes, named like the machine's shared server's. */
const SUPERUSER = 'root';

function pemOf(value: PemOrPath): string {
  return value.trimStart().startsWith('-----BEGIN') ? value : readFileSync(value, 'utf8');
}

/** The highest installed PostgreSQL's bin directory (`/usr/lib/postgresql/N/bin`). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) throw new Error(`no PostgreSQL server binaries under ${root}/*/bin`);
  return join(root, versions[0], 'bin');
}

let postgresIds: { uid: number; gid: number } | undefined;
function postgresUser(): { uid: number; gid: number } {
  if (postgresIds) return postgresIds;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('no postgres OS user in /etc/passwd');
  postgresIds = { uid: Number(uid), gid: Number(gid) };
  return postgresIds;
}

/** Runs a PostgreSQL program as the postgres OS user (the server refuses to run as root). */
async function asPostgres(program: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  // From a directory postgres may enter (the test's working directory may not be one).
  return run('runuser', ['-u', 'postgres', '--', join(binDir(), program), ...args], {
    cwd: tmpdir(),
    maxBuffer: 16 * 1024 * 1024,
  });
}

function quoted(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

function tail(path: string, lines = 40): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no server log)';
  }
}

function failure(error: unknown): string {
  const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message?: string };
  return [message, stdout, stderr].filter((part) => part && part.trim() !== '').join('\n');
}

/**
 * A PostgreSQL server of the test's own that accepts TCP connections only over TLS, on
 * 127.0.0.1 and a free port, with a database `test` and a superuser `root` (trust
 * authentication, as on the machine's shared server). A plaintext TCP connection is refused
 * (pg_hba.conf has `hostssl` lines only); a unix socket in its directory is kept for
 * {@link OwnTlsPostgres.adminQuery}. Each instance has its own directory and port, so test
 * files may run one each side by side. Start it in `beforeAll` and `stop()` it in `afterAll`:
 * nothing else stops it under vitest (the server is a daemon; a hook shuts it down at a
 * normal process exit, but vitest ends its workers with SIGTERM, which runs no exit hook).
 */
export class OwnTlsPostgres {
  private stopping: Promise<void> | undefined;
  private readonly onExit = () => this.killNow();

  private constructor(
    /** The temporary directory (owned by postgres, mode 0700) holding everything. */
    readonly dir: string,
    /** The TCP port on 127.0.0.1. */
    readonly port: number,
    /** The database created for the test. */
    readonly database: string,
  ) {}

  /**
   * Initialises a cluster in a fresh temporary directory, configures TLS and starts it,
   * waiting (`pg_ctl -w`) until it accepts connections; then creates the database. Throws
   * with initdb's output or the server log's tail if any step fails.
   */
  static async start(options: OwnTlsPostgresOptions): Promise<OwnTlsPostgres> {
    if (options.clientCert !== undefined && options.clientCa === undefined) {
      throw new Error('OwnTlsPostgres: clientCert needs clientCa to verify client certificates with');
    }
    const { uid, gid } = postgresUser();
    const dir = mkdtempSync(join(tmpdir(), 'case-read-tls-pg-'));
    chownSync(dir, uid, gid);
    const own = new OwnTlsPostgres(dir, await freePort(), options.database ?? 'test');
    process.once('exit', own.onExit);
    try {
      await own.init(options, uid, gid);
      await own.boot();
      await own.adminQuery(`CREATE DATABASE "${own.database.replaceAll('"', '""')}"`, [], 'postgres');
      return own;
    } catch (error) {
      await own.stop().catch(() => {});
      throw error;
    }
  }

  /**
   * {@link start} with a PKI as `makeTestPki` makes it: its server certificate, and its CA as
   * `clientCa` (the server then asks for, but without `clientCert` does not require, a client
   * certificate).
   */
  static startWithPki(
    pki: PkiLike,
    options: Omit<OwnTlsPostgresOptions, 'cert' | 'key'> = {},
  ): Promise<OwnTlsPostgres> {
    return OwnTlsPostgres.start({
      cert: pki.server.certPem,
      key: pki.server.keyPem,
      clientCa: pki.ca.certPem,
      ...options,
    });
  }

  /** The cluster's data directory. */
  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** The server's log (`pg_ctl -l`). */
  get logFile(): string {
    return join(this.dir, 'postgres.log');
  }

  /** `postgres://root@127.0.0.1:PORT/test`, without TLS parameters: give the client its `ssl` options. */
  get url(): string {
    return `postgres://${SUPERUSER}@127.0.0.1:${this.port}/${this.database}`;
  }

  /** Runs SQL as the superuser over the unix socket (no TLS), in `database` (the test's unless told). */
  async adminQuery(sql: string, values: unknown[] = [], database = this.database): Promise<pg.QueryResult> {
    const client = new pg.Client({ host: this.dir, port: this.port, user: SUPERUSER, database });
    await client.connect();
    try {
      return await client.query(sql, values);
    } finally {
      await client.end();
    }
  }

  /** Stops the server at once (`pg_ctl stop -m immediate`) and removes its directory. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      process.removeListener('exit', this.onExit);
      try {
        if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
          await asPostgres('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() =>
            this.killNow(),
          );
        }
      } finally {
        rmSync(this.dir, { recursive: true, force: true });
      }
    })();
    return this.stopping;
  }

  /** At the test process's exit without `stop()`: an immediate shutdown (SIGQUIT) and the directory removed. */
  private killNow(): void {
    try {
      const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // Not running.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async init(options: OwnTlsPostgresOptions, uid: number, gid: number): Promise<void> {
    try {
      await asPostgres('initdb', [
        '-D',
        this.dataDir,
        `--username=${SUPERUSER}`,
        '--auth=trust',
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
        '--no-instructions',
      ]);
    } catch (error) {
      throw new Error(`OwnTlsPostgres: initdb failed\n${failure(error)}`);
    }
    // PostgreSQL refuses a key file readable by others than its owner, the server's user.
    const file = (name: string, content: string) => {
      const path = join(this.dir, name);
      writeFileSync(path, content, { mode: 0o600 });
      chownSync(path, uid, gid);
      return path;
    };
    const certFile = file('server.crt', pemOf(options.cert));
    const keyFile = file('server.key', pemOf(options.key));
    const caFile =
      options.clientCa === undefined ? undefined : file('client-ca.crt', pemOf(options.clientCa));
    const settings = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${this.port}`,
      `unix_socket_directories = ${quoted(this.dir)}`,
      'ssl = on',
      `ssl_cert_file = ${quoted(certFile)}`,
      `ssl_key_file = ${quoted(keyFile)}`,
      ...(caFile === undefined ? [] : [`ssl_ca_file = ${quoted(caFile)}`]),
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 50',
      'shared_buffers = 16MB',
      'max_wal_senders = 0',
      'wal_level = minimal',
      'log_connections = on',
    ];
    const conf = join(this.dataDir, 'postgresql.conf');
    writeFileSync(conf, `${readFileSync(conf, 'utf8')}\n# OwnTlsPostgres\n${settings.join('\n')}\n`);
    const clientCert = options.clientCert === undefined ? '' : ` clientcert=${options.clientCert}`;
    // No `host` line: a TCP connection without TLS matches nothing and is refused.
    writeFileSync(
      join(this.dataDir, 'pg_hba.conf'),
      ['local all all trust', `hostssl all all 127.0.0.1/32 trust${clientCert}`, ''].join('\n'),
    );
  }

  private async boot(): Promise<void> {
    try {
      await asPostgres('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '30', 'start']);
    } catch (error) {
      throw new Error(
        `OwnTlsPostgres: the server did not start on port ${this.port}\n${failure(error)}\n--- ${this.logFile} (tail) ---\n${tail(this.logFile)}`,
      );
    }
  }
}
