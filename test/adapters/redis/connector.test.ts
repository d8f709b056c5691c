import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisConnector } from '../../../src/adapters/redis/connector.js';
import { type Ca, createCa, issueServerCertificate } from '../../../src/adapters/x509/pki.js';

/**
 * The Redis client's connector: ioredis's standalone one, whose streams keep an `error`
 * listener for good, so that a stream failing twice (Deno's TLS socket: `write EPIPE` after
 * a refused client certificate) does not throw its second error as an uncaught exception.
 */
const dir = mkdtempSync(join(tmpdir(), 'case-read-redis-connector-'));
let plain: Server;
let plainPort: number;
let tlsServer: Server;
let tlsPort: number;
let ca: Ca;
let otherCa: Ca;

/** `server` listening on a loopback port, or on the socket `path`. */
const listening = (server: Server, at: { port: number; host: string } | { path: string }) =>
  new Promise<void>((resolve) => server.listen(at, () => resolve()));
const portOf = (server: Server) => (server.address() as { port: number }).port;

beforeAll(async () => {
  ca = await createCa({ commonName: 'redis CA' });
  otherCa = await createCa({ commonName: 'some other CA' });
  const server = await issueServerCertificate(ca);
  plain = createServer((socket) => socket.on('error', () => {}));
  await listening(plain, { port: 0, host: '127.0.0.1' });
  plainPort = portOf(plain);
  tlsServer = createTlsServer({ cert: server.certPem, key: server.keyPem }, (socket) => {
    socket.on('error', () => {});
    socket.end();
  });
  tlsServer.on('tlsClientError', () => {});
  await listening(tlsServer, { port: 0, host: '127.0.0.1' });
  tlsPort = portOf(tlsServer);
});

afterAll(async () => {
  await new Promise((r) => plain?.close(r));
  await new Promise((r) => tlsServer?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** The stream's first event of those named, with its argument. */
const firstOf = (stream: Socket, ...events: string[]) =>
  new Promise<{ event: string; value: unknown }>((resolve) => {
    for (const event of events) stream.once(event, (value) => resolve({ event, value }));
  });

describe('the Redis connector', () => {
  it('absorbs a second error of a stream already failed, and hands ioredis the first', async () => {
    const connector = new RedisConnector({ host: '127.0.0.1', port: plainPort });
    const stream = (await connector.connect()) as Socket;
    // As ioredis listens: once.
    const seen: Error[] = [];
    stream.once('error', (error: Error) => seen.push(error));
    const first = new Error('first');
    const second = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    expect(() => stream.emit('error', first)).not.toThrow();
    expect(() => stream.emit('error', second)).not.toThrow();
    expect(() => stream.emit('error', second)).not.toThrow();
    expect(seen).toEqual([first]);
    expect(connector.firstError).toBe(first);
    stream.destroy();
  });

  it('keeps the first error of a stream that failed before ioredis listened', async () => {
    const connector = new RedisConnector({ host: '127.0.0.1', port: plainPort });
    const stream = (await connector.connect()) as Socket;
    const error = new Error('refused');
    stream.emit('error', error);
    expect(connector.firstError).toBe(error);
    stream.destroy();
  });

  it('connects by path', async () => {
    const path = join(dir, 'redis.sock');
    const server = createServer((socket) => socket.end());
    await listening(server, { path });
    try {
      const stream = (await new RedisConnector({ path, port: 1 }).connect()) as Socket;
      expect((await firstOf(stream, 'connect', 'error')).event).toBe('connect');
      stream.destroy();
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('makes no stream once disconnected before the next tick', async () => {
    const connector = new RedisConnector({ host: '127.0.0.1', port: plainPort });
    const connecting = connector.connect();
    connector.disconnect();
    await expect(connecting).rejects.toThrow('Connection is closed.');
  });

  it('uses the TLS options as they are at each connection, the host name verified', async () => {
    const options = { host: '127.0.0.1', port: tlsPort, tls: { ca: ca.certPem } };
    const connector = new RedisConnector(options);
    const trusted = (await connector.connect()) as TLSSocket;
    expect((await firstOf(trusted, 'secureConnect', 'error')).event).toBe('secureConnect');
    expect(trusted.authorized).toBe(true);
    trusted.destroy();

    // A reload replaces the client's `options.tls`: the next connection uses it.
    options.tls = { ca: otherCa.certPem };
    const untrusted = (await connector.connect()) as TLSSocket;
    expect((await firstOf(untrusted, 'secureConnect', 'error')).event).toBe('error');
    untrusted.destroy();

    // The CA is right, but the name is not the certificate's.
    Object.assign(options, { tls: { ca: ca.certPem, servername: 'elsewhere.example' } });
    const misnamed = (await connector.connect()) as TLSSocket;
    expect((await firstOf(misnamed, 'secureConnect', 'error')).event).toBe('error');
    misnamed.destroy();
  });
});
