import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningServer,
  startServer,
  type TlsListenerKind,
} from '../../../src/adapters/tls-listener/server.js';
import { issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { runtimeOf } from '../../../src/app/composition/runtime.js';
import { CertificateSerial } from '../../../src/domain/access/certificate-serial.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * The listener of the SAR service's door (decisions §23): `clientCertificates: 'none'`, TLS
 * with the service's own certificate and nothing asked of the client, on the listener `serve`
 * picks for each runtime (this file runs under Node, both forms, and under Bun and Deno): a
 * client with no certificate is served; the same TLS versions as the API's; the slow-client
 * guard; a new certificate for new handshakes; and it never says it verifies clients.
 */
const runtime = runtimeOf();
const KINDS: TlsListenerKind[] = runtime.name === 'node' ? ['https', 'tls-handoff'] : [runtime.tlsListener];
const LIMITS = { headersTimeoutMs: 600, keepAliveTimeoutMs: 400, connectionsCheckingIntervalMs: 100 };

let pki: TestPki;
let client: ClientCredentials;
beforeAll(async () => {
  pki = await makeTestPki();
  client = await pki.client('client-a');
});
afterAll(() => pki.cleanup());

/** A TLS connection, with a client certificate only when given; `maxVersion` to offer an older TLS. */
function open(
  server: RunningServer,
  options: { cert?: ClientCredentials; maxVersion?: 'TLSv1.1' } = {},
): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port: server.port,
      servername: 'localhost',
      ca: pki.ca.certPem,
      ...(options.cert ? { cert: options.cert.certPem, key: options.cert.keyPem } : {}),
      ...(options.maxVersion ? { minVersion: 'TLSv1', maxVersion: options.maxVersion } : {}),
    });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', (error) => {
      // A refused handshake leaves nothing open on this side (Deno's client keeps the socket otherwise).
      socket.destroy();
      reject(error);
    });
  });
}

/** One request on an open connection; resolves with all it received once the connection closes. */
function exchange(socket: TLSSocket, request: string): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.once('close', () => resolve(received));
    socket.write(request);
  });
}

describe.each(KINDS)(`the SAR door's listener, %s (${runtime.name})`, (kind) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(() => new Response('ok'), {
      host: '127.0.0.1',
      port: 0,
      tlsListener: kind,
      clientCertificates: 'none',
      limits: LIMITS,
      tls: { cert: pki.server.certPem, key: pki.server.keyPem, clientCa: pki.ca.certPem },
    });
  });
  // Deno's server keeps the connection of a refused handshake (TLS 1.1 above) until it is cut.
  afterAll(() => server.drain(500));

  it('serves a client that presents no certificate, and never says it verifies client certificates', async () => {
    expect(server.verifiesClientCertificates).toBe(false);
    expect(server.url).toMatch(/^https:/);
    const socket = await open(server);
    const answer = await exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    // Nothing was asked of the client: one that holds a certificate is served the same.
    const withCertificate = await open(server, { cert: client });
    const again = await exchange(
      withCertificate,
      'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    expect(again).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('refuses TLS older than 1.2, as the API listener does', async () => {
    await expect(open(server, { maxVersion: 'TLSv1.1' })).rejects.toThrow();
  });

  it('answers 408 and ends a connection whose request head never completes (the slow-client guard)', async () => {
    const socket = await open(server);
    const answer = await exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('takes a new certificate for new handshakes (a reload), ignoring the client CA', async () => {
    const next = await issueServerCertificate(pki.ca);
    server.setTls?.({ cert: next.certPem, key: next.keyPem, clientCa: pki.otherCa.certPem });
    const socket = await open(server);
    expect(CertificateSerial.parse(socket.getPeerCertificate().serialNumber)).toBe(next.serialNumber);
    const answer = await exchange(socket, 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});
