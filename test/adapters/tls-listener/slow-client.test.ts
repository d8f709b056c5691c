import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RunningServer,
  startServer,
  type TlsListenerKind,
} from '../../../src/adapters/tls-listener/server.js';
import { runtimeOf } from '../../../src/app/composition/runtime.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * The slow-client limits on the mutual-TLS listener, with tight limits so the test is quick.
 * `npm test` runs this file under Node (both listener forms) and under Bun and Deno (the
 * form `serve` picks there): Bun's own HTTP server enforces neither limit on a handed-off
 * socket, so the listener does.
 */
const LIMITS = { headersTimeoutMs: 600, keepAliveTimeoutMs: 400, connectionsCheckingIntervalMs: 100 };
const runtime = runtimeOf();
const KINDS: TlsListenerKind[] = runtime.name === 'node' ? ['https', 'tls-handoff'] : [runtime.tlsListener];

let pki: TestPki;
let client: ClientCredentials;
beforeAll(async () => {
  pki = await makeTestPki();
  client = await pki.client('client-a');
});
afterAll(() => pki.cleanup());

/** A TLS connection with the client certificate, recording what it receives and when it closes. */
async function open(server: RunningServer) {
  const socket: TLSSocket = connect({
    host: '127.0.0.1',
    port: server.port,
    servername: 'localhost',
    ca: pki.ca.certPem,
    cert: client.certPem,
    key: client.keyPem,
  });
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  const started = Date.now();
  const closed = new Promise<number>((resolve) => {
    socket.on('close', () => resolve(Date.now() - started));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, closed, received: () => received };
}

describe.each(KINDS)(`slow clients on the %s listener (${runtime.name})`, (kind) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(() => new Response('ok'), {
      host: '127.0.0.1',
      port: 0,
      tlsListener: kind,
      limits: LIMITS,
      tls: {
        cert: `${pki.server.certPem}\n${pki.ca.certPem}`,
        key: pki.server.keyPem,
        clientCa: pki.ca.certPem,
      },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 408 and ends a connection whose request head does not arrive in time', async () => {
    const { socket, closed, received } = await open(server);
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => socket.write('x-slow: 1\r\n'), 100);
    const after = await closed;
    clearInterval(trickle);
    expect(received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(after).toBeGreaterThanOrEqual(LIMITS.headersTimeoutMs - 50);
    expect(after).toBeLessThan(5_000);
  });

  it('ends a keep-alive connection that stays idle after its response', async () => {
    const { socket, closed, received } = await open(server);
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const after = await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 200 /);
    // The whole body arrived first (Bun's server sends it chunked).
    expect(received()).toMatch(/\r\n\r\n(2\r\nok\r\n0\r\n\r\n|ok)$/);
    expect(after).toBeLessThan(5_000);
  });

  it('serves a client that keeps sending requests within the limits', async () => {
    const { socket, received } = await open(server);
    for (let i = 0; i < 4; i++) {
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(received().match(/HTTP\/1\.1 200 /g)).toHaveLength(4);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });
});
