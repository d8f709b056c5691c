import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCa } from '../../src/adapters/x509/pki.js';
import { CertificateSerial } from '../../src/domain/access/certificate-serial.js';
import { jwksOf, SAR_ISSUER, signingKey } from '../support/authorisation-server.js';
import { cliInProcess, runCli, serveEnv, startServe } from '../support/cli.js';
import { createCrl } from '../support/crl.js';
import { RUNTIMES, type RuntimeCommand } from '../support/runtimes.js';

/**
 * Certificates rotated under `serve` as a platform rotates them (decisions §10), on each
 * runtime: the files are a mounted Kubernetes secret (`server.pem -> ..data/server.pem`,
 * `..data -> v1`, swapped by renaming a new `..data` link over it). A whole new set (server
 * certificate, key and client CA) is picked up from the files and on SIGHUP; a connection
 * made before goes on; a client of the removed CA is refused; a broken set, or one whose key
 * others can read, is refused with a log line and a count, and the old one stays. And
 * TLS_CRL where a runtime cannot check it. The SAR service's door serves each new server
 * certificate with the API listener.
 */

const FILES = ['server.pem', 'server-key.pem', 'ca.pem'] as const;

interface Client {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

/** One HTTP/1.1 request on an open TLS connection; resolves with the status code. */
function ask(socket: TLSSocket, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      // Enough to know the answer: its status line and the end of its headers.
      if (status && text.includes('\r\n\r\n')) {
        socket.off('data', onData);
        socket.off('close', onClose);
        resolve(Number(status[1]));
      }
    };
    const onClose = () => reject(new Error('closed'));
    socket.on('data', onData);
    socket.once('close', onClose);
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(
      `GET /case/X123456/home-office-interest HTTP/1.1\r\nHost: localhost\r\n${lines.join('')}\r\n`,
    );
  });
}

describe.each(RUNTIMES)('certificates rotated under serve on $name', (runtime: RuntimeCommand) => {
  let dir: string;
  let secret: string;
  let child: ChildProcess;
  let url: URL;
  /** The SAR service's door, which serves the same server certificate (decisions §23). */
  let sarUrl: URL;
  let managementUrl: string;
  let output: () => string;
  let headers: Record<string, string>;
  const clients = {} as Record<'v1' | 'v2', Client>;

  /** Points `..data` at another version, atomically, as the kubelet does. */
  const swapTo = (version: string) => {
    symlinkSync(version, join(secret, '..data_tmp'));
    renameSync(join(secret, '..data_tmp'), join(secret, '..data'));
  };

  const open = (client: Client): Promise<TLSSocket> =>
    new Promise((resolve, reject) => {
      const socket = connect(
        {
          host: url.hostname,
          port: Number(url.port),
          servername: 'localhost',
          ca: [clients.v1.ca, clients.v2.ca],
          cert: client.cert,
          key: client.key,
        },
        () => resolve(socket),
      );
      socket.once('error', reject);
    });

  const answers = async (client: Client): Promise<number | 'refused'> => {
    try {
      const socket = await open(client);
      const status = await ask(socket, headers);
      socket.destroy();
      return status;
    } catch {
      return 'refused';
    }
  };

  const servedSerial = async (client: Client) => {
    const socket = await open(client);
    const serial = CertificateSerial.parse(socket.getPeerCertificate().serialNumber);
    socket.destroy();
    return serial;
  };

  /** The serial of the certificate the SAR door serves to a client with none of its own. */
  const doorSerial = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(
        {
          host: sarUrl.hostname,
          port: Number(sarUrl.port),
          servername: 'localhost',
          ca: [clients.v1.ca, clients.v2.ca],
        },
        () => {
          resolve(CertificateSerial.parse(socket.getPeerCertificate().serialNumber));
          socket.destroy();
        },
      );
      socket.once('error', reject);
    });

  /** Waits for the nth log line with this message. */
  const logLine = async (message: string, nth: number) => {
    for (let i = 0; i < 100; i++) {
      const lines = output()
        .split('\n')
        .filter((line) => line.includes(`"msg":"${message}"`));
      if (lines.length >= nth) return JSON.parse(lines[nth - 1] ?? '') as Record<string, unknown>;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no ${nth}th "${message}" line:\n${output()}`);
  };

  const metrics = async () => (await fetch(`${managementUrl}/metrics`)).text();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `case-read-rotation-${runtime.name}-`));
    secret = join(dir, 'secret');
    const env = serveEnv(dir);
    // Set up with the CLI's commands in this process; `serve` runs on the runtime under test
    // (test/e2e/runtimes.test.ts runs the commands themselves on each runtime).
    const cli = cliInProcess(env);
    for (const version of ['v1', 'v2'] as const) {
      const pki = join(dir, `pki-${version}`);
      await cli('pki', 'init', '--dir', pki);
      const files = JSON.parse(await cli('pki', 'client', 'client-a', '--dir', pki, '--json')) as {
        cert: string;
        key: string;
      };
      clients[version] = {
        cert: readFileSync(files.cert, 'utf8'),
        key: readFileSync(files.key, 'utf8'),
        ca: readFileSync(join(pki, 'ca.pem'), 'utf8'),
      };
      mkdirSync(join(secret, version), { recursive: true });
      // As the kubelet writes a secret volume with `defaultMode: 0440`: the key not readable by others.
      for (const file of FILES)
        writeFileSync(join(secret, version, file), readFileSync(join(pki, file)), { mode: 0o440 });
    }
    symlinkSync('v1', join(secret, '..data'));
    for (const file of FILES) symlinkSync(join('..data', file), join(secret, file));
    await cli('cases', 'import', join(process.cwd(), 'fixtures/cases.json'));
    await cli('clients', 'add', 'client-a', '--permissions', 'getHomeOfficeInterest');
    const apiKey = (await cli('keys', 'issue', 'client-a')).trim();
    const token = (await cli('tokens', 'mint', '--client', 'client-a', '--dir', join(dir, 'pki-v1'))).trim();
    headers = { 'x-api-key': apiKey, authorization: `Bearer ${token}` };
    const sarJwks = join(dir, 'sar-jwks.json');
    writeFileSync(sarJwks, JSON.stringify(jwksOf([await signingKey('as-1')])));
    const started = await startServe(
      {
        ...env,
        TLS_CERT: join(secret, 'server.pem'),
        TLS_KEY: join(secret, 'server-key.pem'),
        TLS_CLIENT_CA: join(secret, 'ca.pem'),
        BEARER_JWKS: join(dir, 'pki-v1', 'jwks.json'),
        TLS_WATCH_MS: '200',
        SAR_PORT: '0',
        SAR_AUTH_JWKS: sarJwks,
        SAR_AUTH_ISSUER: SAR_ISSUER,
      },
      runtime,
    );
    ({ child, managementUrl, output } = started);
    url = new URL(started.url);
    sarUrl = new URL(started.sarUrl ?? '');
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the first set, and shows when its certificates end', async () => {
    expect(await answers(clients.v1)).toBe(200);
    expect(await answers(clients.v2)).toBe('refused');
    const text = await metrics();
    expect(text).toMatch(
      /case_read_certificate_expiry_timestamp_seconds\{certificate="server",subject="localhost"\} \d+/,
    );
    expect(text).toMatch(
      /case_read_certificate_expiry_timestamp_seconds\{certificate="client-ca",subject="[^"]+"\} \d+/,
    );
    // The certificate client-a presented: known once it has made a request.
    const notAfter = new Date(new X509Certificate(clients.v1.cert).validTo).getTime() / 1000;
    expect(text).toContain(
      `case_read_client_certificate_expiry_timestamp_seconds{client="client-a"} ${notAfter}`,
    );
  });

  it('picks up a new set from the swapped secret: new handshakes get it, an open connection goes on', async () => {
    const before = await open(clients.v1);
    expect(await ask(before, headers)).toBe(200);
    const servedBefore = CertificateSerial.parse(before.getPeerCertificate().serialNumber);

    swapTo('v2');
    const line = await logLine('tls reloaded', 1);
    expect(line).toMatchObject({ certificate: 'server', trigger: 'file', notAfter: expect.any(String) });
    expect(line.serialNumber).not.toBe(servedBefore);

    expect(await answers(clients.v2)).toBe(200);
    expect(await servedSerial(clients.v2)).toBe(line.serialNumber);
    // The SAR door serves the new certificate too, from the same reload.
    expect(await doorSerial()).toBe(line.serialNumber);
    // A client of the CA that was taken out is refused from the next handshake…
    expect(await answers(clients.v1)).toBe('refused');
    // …while the connection it opened before the swap carries on.
    expect(await ask(before, headers)).toBe(200);
    before.destroy();
  });

  it('refuses a broken set with a log line and a count, and keeps serving the one in use', async () => {
    mkdirSync(join(secret, 'v3'));
    writeFileSync(join(secret, 'v3', 'server.pem'), readFileSync(join(secret, 'v1', 'server.pem')));
    writeFileSync(join(secret, 'v3', 'server-key.pem'), readFileSync(join(secret, 'v2', 'server-key.pem')), {
      mode: 0o600,
    });
    writeFileSync(join(secret, 'v3', 'ca.pem'), readFileSync(join(secret, 'v2', 'ca.pem')));
    swapTo('v3');
    const line = await logLine('tls reload failed, the set in use stays', 1);
    expect(line).toMatchObject({
      certificate: 'server',
      reason: 'TLS_KEY: is not the key of the certificate in TLS_CERT',
    });
    expect(await metrics()).toContain('case_read_tls_reload_failures_total{certificate="server"} 1');
    expect(await answers(clients.v2)).toBe(200);
    const served = await servedSerial(clients.v2);
    expect(served).toBe((await logLine('tls reloaded', 1)).serialNumber);
    expect(output()).not.toContain('PRIVATE KEY');
  });

  it('refuses a new set whose key others can read (the default 0644 of a secret volume), and keeps the one in use', async () => {
    mkdirSync(join(secret, 'v4'));
    for (const file of FILES)
      writeFileSync(join(secret, 'v4', file), readFileSync(join(secret, 'v1', file)), { mode: 0o644 });
    swapTo('v4');
    const line = await logLine('tls reload failed, the set in use stays', 2);
    // The file named as configured: the mode is the one the links lead to.
    expect(line).toMatchObject({
      certificate: 'server',
      reason: `TLS_KEY: ${join(secret, 'server-key.pem')} is readable by others (mode 0644); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`,
    });
    expect(await metrics()).toContain('case_read_tls_reload_failures_total{certificate="server"} 2');
    // The set in use (v2) stays: its clients are served, v1's are not.
    expect(await answers(clients.v2)).toBe(200);
    expect(await answers(clients.v1)).toBe('refused');
    expect(output()).not.toContain('PRIVATE KEY');
  });

  it('reloads on SIGHUP', async () => {
    swapTo('v1');
    child.kill('SIGHUP');
    const line = await logLine('tls reloaded', 2);
    expect(line).toMatchObject({ certificate: 'server', trigger: 'SIGHUP' });
    expect(await answers(clients.v1)).toBe(200);
    expect(await doorSerial()).toBe(line.serialNumber);
    expect(child.exitCode).toBeNull();
  });
});

describe.each(RUNTIMES)('TLS_CRL on $name', (runtime: RuntimeCommand) => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `case-read-crl-${runtime.name}-`));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is checked in the handshake where the runtime can, and refused at start where it cannot', async () => {
    const env = serveEnv(dir);
    const cli = cliInProcess(env);
    const pki = join(dir, 'pki');
    await cli('pki', 'init', '--dir', pki);
    const files = JSON.parse(await cli('pki', 'client', 'client-a', '--dir', pki, '--json')) as {
      cert: string;
      key: string;
      serialNumber: string;
    };
    const ca = await loadCa(
      readFileSync(join(pki, 'ca.pem'), 'utf8'),
      readFileSync(join(pki, 'ca-key.pem'), 'utf8'),
    );
    writeFileSync(join(pki, 'crl.pem'), await createCrl(ca, [files.serialNumber]));
    await cli('cases', 'import', join(process.cwd(), 'fixtures/cases.json'));
    await cli('clients', 'add', 'client-a', '--permissions', 'getCase');
    const withCrl = { ...env, TLS_CRL: join(pki, 'crl.pem') };
    if (runtime.name !== 'node') {
      const result = runCli(['serve'], { ...withCrl, PORT: '0', MANAGEMENT_PORT: '0' }, runtime);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`TLS_CRL: ${runtime.name}'s TLS does not check a CRL`);
      return;
    }
    const { child, url } = await startServe(withCrl, runtime);
    try {
      const target = new URL(url);
      const outcome = await new Promise<string>((resolve) => {
        const socket = connect(
          {
            host: target.hostname,
            port: Number(target.port),
            servername: 'localhost',
            ca: readFileSync(join(pki, 'ca.pem'), 'utf8'),
            cert: readFileSync(files.cert, 'utf8'),
            key: readFileSync(files.key, 'utf8'),
          },
          () => socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n'),
        );
        socket.once('data', () => resolve('answered'));
        socket.once('error', () => resolve('refused'));
        socket.once('close', () => resolve('refused'));
      });
      expect(outcome).toBe('refused');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });
});
