import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Bytes } from '../../src/adapters/shared/sha256.js';
import { issueServerCertificate, loadCa } from '../../src/adapters/x509/pki.js';
import { CertificateSerial } from '../../src/domain/access/certificate-serial.js';
import { verifierKeyLine } from '../../src/tlog/note.js';
import {
  BIN,
  type InProcessServeSetup,
  prepareServeInProcess,
  ROOT,
  runCliInProcess,
  startServe,
} from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';
import { CURRENT, RUNTIMES, type RuntimeCommand } from '../support/runtimes.js';

/**
 * A file named by a variable that is not a regular file (decisions §20), as a new user met it
 * (issue 55): `TLS_KEY` a FIFO made `config check` wait for a writer for ever, and under
 * `serve` a key file replaced by a FIFO froze the service within a second (the watcher's read
 * blocked the event loop), for good. Now a FIFO, a directory or a device is refused at once,
 * naming the variable and what the file is, at start and at reload; reads go on being answered
 * while the watcher refuses it; and the files put right are taken. A key others may write
 * (0602) is refused as one they may read is; one the group may read (0640) is taken.
 *
 * Each command is run with a timeout, and what is asserted is that it ended by itself (no
 * signal): a command that waits on a FIFO fails the test, it does not hang it.
 */

describe.each(RUNTIMES)('files that are not files, on $name', (runtime: RuntimeCommand) => {
  let dir: string;
  let setup: InProcessServeSetup;
  let pki: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `case-read-named-files-${runtime.name}-`));
    setup = await prepareServeInProcess(dir);
    pki = join(dir, 'pki');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A CLI command on this runtime, ended by the timeout should it wait. */
  const run = (args: string[], env: Record<string, string>) =>
    spawnSync(runtime.command, [...runtime.args, BIN, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', MANAGEMENT_PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });

  /** Asserts the command ended by itself, refused, and said `message`. */
  const refusedWith = (result: ReturnType<typeof run>, message: string) => {
    expect(result.error).toBeUndefined();
    expect(result.signal).toBeNull();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
  };

  it('config check and serve refuse a FIFO as TLS_KEY at once, naming the variable and what it is', () => {
    const fifo = join(dir, 'key.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    for (const command of [['config', 'check'], ['serve']]) {
      refusedWith(
        run(command, { ...setup.env, TLS_KEY: fifo }),
        `TLS_KEY: ${fifo} is not a regular file (a FIFO)`,
      );
    }
  });

  describe('under serve, the key replaced by a FIFO', () => {
    let child: ChildProcess;
    let url: string;
    let managementUrl: string;
    let output: () => string;
    let live: { cert: string; key: string };

    beforeAll(async () => {
      live = { cert: join(dir, 'live', 'server.pem'), key: join(dir, 'live', 'server-key.pem') };
      mkdirSync(join(dir, 'live'));
      copyFileSync(join(pki, 'server.pem'), live.cert);
      copyFileSync(join(pki, 'server-key.pem'), live.key);
      chmodSync(live.key, 0o600);
      const started = await startServe(
        { ...setup.env, TLS_CERT: live.cert, TLS_KEY: live.key, TLS_WATCH_MS: '100' },
        runtime,
      );
      ({ child, managementUrl, output } = started);
      url = started.url.replace('127.0.0.1', 'localhost');
    });
    afterAll(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    });

    /** A read of a case on a connection of its own: its status. */
    const read = async () =>
      (
        await httpsRequest(`${url}/case/X123456`, {
          ca: setup.ca,
          ...setup.client,
          headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
        })
      ).status;

    /** The serial of the certificate a new connection is served. */
    const servedSerial = () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(
          {
            host: '127.0.0.1',
            port: Number(new URL(url).port),
            servername: 'localhost',
            ca: setup.ca,
            ...setup.client,
          },
          () => {
            resolve(CertificateSerial.parse(socket.getPeerCertificate().serialNumber));
            socket.destroy();
          },
        );
        socket.once('error', reject);
      });

    /** Waits for the nth log line with this message (the watcher's own word that it has seen the change). */
    const logLine = async (message: string, nth: number) => {
      for (let i = 0; i < 200; i++) {
        const lines = output()
          .split('\n')
          .filter((line) => line.includes(`"msg":"${message}"`));
        if (lines.length >= nth) return JSON.parse(lines[nth - 1] ?? '') as Record<string, unknown>;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`no ${nth}th "${message}" line:\n${output()}`);
    };

    it('goes on answering reads, refuses the reload naming TLS_KEY and the FIFO, and takes the files put right', async () => {
      expect(await read()).toBe(200);
      rmSync(live.key);
      expect(spawnSync('mkfifo', [live.key]).status).toBe(0);
      const refused = await logLine('tls reload failed, the set in use stays', 1);
      expect(refused).toMatchObject({
        certificate: 'server',
        trigger: 'file',
        reason: `TLS_KEY: ${live.key} is not a regular file (a FIFO)`,
      });
      // The watcher has seen the FIFO, tried the set and refused it: the service answers on.
      for (let i = 0; i < 5; i++) expect(await read()).toBe(200);
      expect(await (await fetch(`${managementUrl}/metrics`)).text()).toContain(
        'case_read_tls_reload_failures_total{certificate="server"} 1',
      );
      expect(child.exitCode).toBeNull();

      // Put right with a new certificate and key, each renamed into place over what was there.
      const ca = await loadCa(
        readFileSync(join(pki, 'ca.pem'), 'utf8'),
        readFileSync(join(pki, 'ca-key.pem'), 'utf8'),
      );
      const next = await issueServerCertificate(ca);
      writeFileSync(`${live.key}.new`, next.keyPem, { mode: 0o600 });
      renameSync(`${live.key}.new`, live.key);
      writeFileSync(`${live.cert}.new`, next.certPem);
      renameSync(`${live.cert}.new`, live.cert);
      const reloaded = await logLine('tls reloaded', 1);
      expect(reloaded).toMatchObject({
        certificate: 'server',
        trigger: 'file',
        serialNumber: next.serialNumber,
      });
      expect(await servedSerial()).toBe(next.serialNumber);
      expect(await read()).toBe(200);
      expect(output()).not.toContain('PRIVATE KEY');
    });
  });
});

describe('each file config check reads, on the runtime running the tests', () => {
  let dir: string;
  let setup: InProcessServeSetup;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'case-read-named-files-'));
    setup = await prepareServeInProcess(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a directory and a device as the key, naming the variable and what it is', async () => {
    mkdirSync(join(dir, 'a-folder'));
    for (const [path, kind] of [
      [join(dir, 'a-folder'), 'a directory'],
      ['/dev/null', 'a character device'],
    ] as const) {
      const result = await runCliInProcess(['config', 'check'], { ...setup.env, TLS_KEY: path });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`TLS_KEY: ${path} is not a regular file (${kind})`);
    }
  });

  it('refuses a key others may write (0602), and takes one its group may read (0640)', async () => {
    const keyOf = (name: string, mode: number): string => {
      const path = join(dir, name);
      copyFileSync(join(dir, 'pki', 'server-key.pem'), path);
      chmodSync(path, mode);
      return path;
    };
    const writable = keyOf('key-0602.pem', 0o602);
    const refused = await runCliInProcess(['config', 'check'], { ...setup.env, TLS_KEY: writable });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      `TLS_KEY: ${writable} is writable by others (mode 0602); make it 0640 or 0600`,
    );
    const taken = await runCliInProcess(['config', 'check'], {
      ...setup.env,
      TLS_KEY: keyOf('key-0640.pem', 0o640),
    });
    expect(taken.stderr).toBe('');
    expect(taken.status).toBe(0);
  });

  it('refuses a FIFO as a certificate, the client CA or the JWKS file, each at once', () => {
    const fifo = join(dir, 'a.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    for (const variable of ['TLS_CERT', 'TLS_CLIENT_CA', 'BEARER_JWKS']) {
      const result = spawnSync(CURRENT.command, [...CURRENT.args, BIN, 'config', 'check'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...setup.env, [variable]: fifo },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(result.signal).toBeNull();
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(variable);
      expect(result.stderr).toContain(`${fifo} is not a regular file (a FIFO)`);
    }
  });
  it('the operator commands refuse a FIFO as the file they are given, at once', () => {
    const fifo = join(dir, 'given.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const vkey = verifierKeyLine(sha256Bytes, 'case-read.test.example/audit', new Uint8Array(32).fill(7));
    for (const [args, named] of [
      [['audit', 'verify-proof', fifo, fifo, '--vkey', vkey], fifo],
      [
        ['tokens', 'mint', '--client', 'client-a', '--dir', join(dir, 'pki'), '--bind-cert', fifo],
        `--bind-cert ${fifo}`,
      ],
      [['certs', 'sign', fifo, '--client', 'client-a'], fifo],
    ] as const) {
      const result = spawnSync(CURRENT.command, [...CURRENT.args, BIN, ...args], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          ...setup.env,
          CLIENT_CERT_ISSUER: 'local',
          CLIENT_CA_CERT: join(dir, 'pki', 'ca.pem'),
          CLIENT_CA_KEY: join(dir, 'pki', 'ca-key.pem'),
        },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(result.signal).toBeNull();
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain(`${named} is not a regular file (a FIFO)`);
    }
  });
});
