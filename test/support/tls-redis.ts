import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type Ca, issueClientCertificate } from '../../src/adapters/x509/pki.js';
import { freePort } from './ports.js';

/** PEM text, or the path of a file holding it. */
export type PemOrPath = string;

export interface OwnTlsRedisOptions {
  /** The server's certificate (chain), PEM or a path. */
  readonly cert: PemOrPath;
  /** The server certificate's private key, PEM or a path. */
  readonly key: PemOrPath;
  /** The CA bundle that verifies client certificates (`--tls-ca-cert-file`; redis requires one). */
  readonly clientCa: PemOrPath;
  /** `--tls-auth-clients`: whether a client certificate is refused, optional or required. `no` unless told. */
  readonly authClients?: 'no' | 'optional' | 'yes';
  /**
   * The CA that issued `cert`, which the readiness probe trusts; without it the probe does
   * not verify the server (it only waits for PING to answer).
   */
  readonly serverCa?: PemOrPath;
  /**
   * A client certificate and key the readiness probe presents. With `authClients: 'yes'` and
   * none, readiness is redis-server's own "Ready to accept connections" line instead of a PING.
   */
  readonly probeClient?: { readonly cert: PemOrPath; readonly key: PemOrPath };
}

/** A PKI as `makeTestPki` makes it: its CA (with its key, to issue the probe a client certificate) and server certificate. */
export interface PkiLike {
  readonly ca: Ca;
  readonly server: { readonly certPem: string; readonly keyPem: string };
}

const DEADLINE_MS = 10_000;

function pemOf(value: PemOrPath): string {
  return value.trimStart().startsWith('-----BEGIN') ? value : readFileSync(value, 'utf8');
}

/**
 * A redis-server of the test's own that listens only over TLS (`--port 0 --tls-port P`), on
 * 127.0.0.1 and a free port, with nothing persisted. A plaintext client is reset at its first
 * bytes (ioredis: `ECONNRESET`, then "Connection is closed."). Each instance has its own
 * directory and port. Start it in `beforeAll` and `stop()` it in `afterAll`: nothing else
 * stops it under vitest (a hook kills it at a normal process exit, but vitest ends its
 * workers with SIGTERM, which runs no exit hook).
 */
export class OwnTlsRedis {
  private process: ChildProcess | undefined;
  private output = '';
  private lastProbeError = '';
  private stopping: Promise<void> | undefined;
  private readonly onExit = () => {
    this.process?.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  };

  private constructor(
    /** The temporary directory holding the certificate files. */
    readonly dir: string,
    /** The TLS port on 127.0.0.1. */
    readonly port: number,
  ) {}

  /**
   * Writes the files, starts redis-server and waits (10 s at most) until a TLS client's PING
   * answers (see {@link OwnTlsRedisOptions.probeClient}). Throws with the server's output if
   * it exits or does not answer in time.
   */
  static async start(options: OwnTlsRedisOptions): Promise<OwnTlsRedis> {
    const dir = mkdtempSync(join(tmpdir(), 'case-read-tls-redis-'));
    const own = new OwnTlsRedis(dir, await freePort());
    process.once('exit', own.onExit);
    try {
      await own.up(options);
      return own;
    } catch (error) {
      await own.stop();
      throw error;
    }
  }

  /**
   * {@link start} with a PKI as `makeTestPki` makes it: its server certificate, its CA as the
   * client CA and the probe's trust, and a probe client certificate issued by that CA.
   */
  static async startWithPki(
    pki: PkiLike,
    options: { authClients?: 'no' | 'optional' | 'yes' } = {},
  ): Promise<OwnTlsRedis> {
    const probe = await issueClientCertificate(pki.ca, { commonName: 'own-tls-redis-probe' });
    return OwnTlsRedis.start({
      cert: pki.server.certPem,
      key: pki.server.keyPem,
      clientCa: pki.ca.certPem,
      serverCa: pki.ca.certPem,
      probeClient: { cert: probe.certPem, key: probe.keyPem },
      ...options,
    });
  }

  /** `rediss://127.0.0.1:PORT`: give the client its `tls` options (`ca`, and `cert`/`key` when required). */
  get url(): string {
    return `rediss://127.0.0.1:${this.port}`;
  }

  /** What redis-server has written to stdout and stderr so far. */
  get log(): string {
    return this.output;
  }

  /** Kills the server (SIGKILL) and removes its directory. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      process.removeListener('exit', this.onExit);
      const child = this.process;
      this.process = undefined;
      try {
        if (child && child.exitCode === null && child.signalCode === null) {
          await new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          });
        }
      } finally {
        rmSync(this.dir, { recursive: true, force: true });
      }
    })();
    return this.stopping;
  }

  private async up(options: OwnTlsRedisOptions): Promise<void> {
    const file = (name: string, content: string) => {
      const path = join(this.dir, name);
      writeFileSync(path, content, { mode: 0o600 });
      return path;
    };
    const args = [
      '--port',
      '0',
      '--tls-port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      this.dir,
      '--tls-cert-file',
      file('server.crt', pemOf(options.cert)),
      '--tls-key-file',
      file('server.key', pemOf(options.key)),
      '--tls-ca-cert-file',
      file('client-ca.crt', pemOf(options.clientCa)),
      '--tls-auth-clients',
      options.authClients ?? 'no',
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-64 * 1024);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    child.once('error', (error) => {
      exited = true;
      collect(Buffer.from(`${error.message}\n`));
    });

    const fail = (why: string) =>
      new Error(
        `OwnTlsRedis: redis-server ${why} (port ${this.port})\n--- output ---\n${this.output.trimEnd()}`,
      );
    const canPing = options.authClients !== 'yes' || options.probeClient !== undefined;
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      if (exited) throw fail(`exited (${child.exitCode ?? child.signalCode})`);
      if (canPing ? await this.pings(options) : /Ready to accept connections/.test(this.output)) return;
      if (Date.now() > deadline) {
        const probe = canPing ? ` to PING (last probe error: ${this.lastProbeError || 'none'})` : '';
        throw fail(`did not answer within ${DEADLINE_MS / 1000} s${probe}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private async pings(options: OwnTlsRedisOptions): Promise<boolean> {
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 2000,
      tls: {
        ...(options.serverCa === undefined
          ? { rejectUnauthorized: false }
          : { ca: pemOf(options.serverCa), rejectUnauthorized: true }),
        ...(options.probeClient === undefined
          ? {}
          : { cert: pemOf(options.probeClient.cert), key: pemOf(options.probeClient.key) }),
      },
    });
    probe.on('error', () => {});
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch (error) {
      this.lastProbeError = (error as Error).message;
      return false;
    } finally {
      probe.disconnect();
    }
  }
}
