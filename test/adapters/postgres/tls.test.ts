import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sslOptionsOf } from '../../../src/adapters/postgres/tls.js';
import { targetOf } from '../../../src/adapters/postgres/url.js';
import { createCa, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { StoreError } from '../../../src/ports/stores.js';

/**
 * libpq's meanings, as the handshake options node-postgres is given carry them out: against
 * a TLS server whose certificate names localhost and 127.0.0.1 only, reached at 127.0.0.2
 * (loopback too, but not a name the certificate holds).
 */
const dir = mkdtempSync(join(tmpdir(), 'case-read-pg-tls-'));
const files = { ca: join(dir, 'ca.pem'), otherCa: join(dir, 'other-ca.pem') };
let server: Server;
let port: number;

beforeAll(async () => {
  const ca = await createCa({ commonName: 'database CA' });
  const issued = await issueServerCertificate(ca);
  writeFileSync(files.ca, ca.certPem);
  writeFileSync(files.otherCa, (await createCa({ commonName: 'some other CA' })).certPem);
  server = createServer({ cert: issued.certPem, key: issued.keyPem }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether a handshake with the URL's options to `host` succeeds, else Node's error code. */
function handshake(url: string, host: string): Promise<true | string> {
  const options = sslOptionsOf('case store', targetOf(url).tls);
  if (options === false) throw new Error('no TLS');
  return new Promise((resolve) => {
    const socket = connect({ ...options, host, port });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const url = (params: string) => `postgres://u@h/db?${params}`;

describe("PostgreSQL's sslmode, carried out", () => {
  it('verify-full: the chain and the host name', async () => {
    expect(await handshake(url(`sslmode=verify-full&sslrootcert=${files.ca}`), '127.0.0.1')).toBe(true);
    expect(await handshake(url(`sslmode=verify-full&sslrootcert=${files.ca}`), '127.0.0.2')).toBe(
      'ERR_TLS_CERT_ALTNAME_INVALID',
    );
    expect(await handshake(url(`sslmode=verify-full&sslrootcert=${files.otherCa}`), '127.0.0.1')).toMatch(
      /SELF_SIGNED|UNABLE_TO_VERIFY/,
    );
  });

  it('verify-ca, and require with sslrootcert (libpq): the chain, not the host name', async () => {
    for (const mode of ['verify-ca', 'require']) {
      expect(await handshake(url(`sslmode=${mode}&sslrootcert=${files.ca}`), '127.0.0.2')).toBe(true);
      expect(await handshake(url(`sslmode=${mode}&sslrootcert=${files.otherCa}`), '127.0.0.2')).toMatch(
        /SELF_SIGNED|UNABLE_TO_VERIFY/,
      );
    }
  });

  it('require alone: encrypted, the server not verified', async () => {
    expect(await handshake(url('sslmode=require'), '127.0.0.2')).toBe(true);
  });

  it('disable, or no sslmode: no TLS at all', () => {
    expect(sslOptionsOf('case store', targetOf(url('sslmode=disable')).tls)).toBe(false);
    expect(sslOptionsOf('case store', targetOf('postgres://u@h/db').tls)).toBe(false);
  });

  it('a file that cannot be used is refused when the pool is made, naming the store and the parameter', () => {
    const missing = join(dir, 'missing.pem');
    expect(() =>
      sslOptionsOf('audit store', targetOf(url(`sslmode=verify-full&sslrootcert=${missing}`)).tls),
    ).toThrow(new StoreError(`audit store: sslrootcert ${missing} cannot be read (ENOENT)`));
    const notPem = join(dir, 'not-a-bundle.pem');
    writeFileSync(notPem, 'hello');
    expect(() =>
      sslOptionsOf('audit store', targetOf(url(`sslmode=verify-full&sslrootcert=${notPem}`)).tls),
    ).toThrow('audit store: sslrootcert: holds no PEM certificate');
  });
});
