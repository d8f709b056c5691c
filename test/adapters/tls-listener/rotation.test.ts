import { type ConnectionOptions, connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectRuntime } from '../../../src/adapters/shared/runtime.js';
import { type RunningServer, startServer, type TlsFiles } from '../../../src/adapters/tls-listener/server.js';
import { type Ca, createCa, type Issued, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { runtimeOf } from '../../../src/app/composition/runtime.js';
import { CertificateSerial } from '../../../src/domain/access/certificate-serial.js';
import { createCrl } from '../../support/crl.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * Certificates swapped under a running listener (decisions §10), on the listener `serve`
 * picks for each runtime (this file runs under Node, Bun and Deno): new handshakes see the
 * new set, a connection opened before goes on with the old, a client of a CA that was taken
 * out of the bundle is refused, and a set the TLS stack cannot load is refused with the old
 * one kept.
 */

const LISTENER = runtimeOf().tlsListener;

let pki: TestPki;
let newCa: Ca;
let newServer: Issued;
let oldClient: ClientCredentials;
let newClient: ClientCredentials;
let server: RunningServer;

const filesOf = (server: Issued, clientCa: string, crl?: string): TlsFiles => ({
  cert: server.certPem,
  key: server.keyPem,
  clientCa,
  ...(crl ? { crl } : {}),
});

beforeAll(async () => {
  pki = await makeTestPki();
  newCa = await createCa({ commonName: 'rotated CA' });
  newServer = await issueServerCertificate(newCa);
  oldClient = await pki.client('client-a');
  newClient = await pki.client('client-a', { ca: newCa });
  server = await startServer(() => new Response('ok'), {
    host: '127.0.0.1',
    port: 0,
    tls: filesOf(pki.server, pki.ca.certPem),
    tlsListener: LISTENER,
  });
});
afterAll(async () => {
  await server.close();
  pki.cleanup();
});

/** A TLS connection with a client certificate; trusts both server CAs, so the serial it sees tells which set served it. */
function open(client: ClientCredentials): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const options: ConnectionOptions = {
      host: '127.0.0.1',
      port: server.port,
      servername: 'localhost',
      ca: [pki.ca.certPem, newCa.certPem],
      cert: client.certPem,
      key: client.keyPem,
    };
    const socket = connect(options, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** One HTTP/1.1 request on an open connection; resolves with the status line. */
function ask(socket: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      // The body `ok`, whole or chunked (Bun's HTTP server chunks it).
      if (/\r\n\r\n(ok|2\r\nok\r\n0\r\n\r\n)$/.test(text)) {
        socket.off('data', onData);
        resolve(text.split('\r\n')[0] ?? '');
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    // TLS 1.3: a refused client certificate ends the connection after the client's handshake.
    socket.once('close', () => reject(new Error('closed')));
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  });
}

/** Whether a handshake and one request with this client succeed (a refused certificate fails one or the other). */
async function admitted(client: ClientCredentials): Promise<boolean> {
  try {
    const socket = await open(client);
    const status = await ask(socket);
    socket.destroy();
    return status.startsWith('HTTP/1.1 200');
  } catch {
    return false;
  }
}

const serialSeen = (socket: TLSSocket) => CertificateSerial.parse(socket.getPeerCertificate().serialNumber);

describe('TLS files replaced under a running listener', () => {
  it('new handshakes get the new certificate and CA; a connection opened before keeps working', async () => {
    const before = await open(oldClient);
    expect(serialSeen(before)).toBe(pki.server.serialNumber);
    expect(await ask(before)).toMatch(/^HTTP\/1\.1 200/);

    server.setTls?.(filesOf(newServer, newCa.certPem));

    const after = await open(newClient);
    expect(serialSeen(after)).toBe(newServer.serialNumber);
    expect(await ask(after)).toMatch(/^HTTP\/1\.1 200/);
    after.destroy();
    // The connection made before the swap carries on with what it was made with.
    expect(await ask(before)).toMatch(/^HTTP\/1\.1 200/);
    before.destroy();
  });

  it('a client of the CA taken out of the bundle is refused; one of the new CA is let in', async () => {
    expect(await admitted(oldClient)).toBe(false);
    expect(await admitted(newClient)).toBe(true);
  });

  it('a set the TLS stack cannot load (a CRL that does not parse) throws and the set in use stays', async () => {
    const broken = '-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n';
    expect(() => server.setTls?.(filesOf(pki.server, pki.ca.certPem, broken))).toThrow();
    const socket = await open(newClient);
    expect(serialSeen(socket)).toBe(newServer.serialNumber);
    socket.destroy();
  });

  // Only Node's TLS checks a CRL (Bun's cannot load one, Deno's ignores it: `serve` refuses TLS_CRL on both).
  it.skipIf(detectRuntime().name !== 'node')('a new CRL revokes from the next handshake', async () => {
    server.setTls?.(filesOf(newServer, newCa.certPem, await createCrl(newCa, [newClient.serialNumber])));
    expect(await admitted(newClient)).toBe(false);
    server.setTls?.(filesOf(newServer, newCa.certPem));
    expect(await admitted(newClient)).toBe(true);
  });
});
