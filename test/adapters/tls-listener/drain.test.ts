import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../../src/adapters/tls-listener/server.js';

/** The listener's drain, on plain HTTP (the TLS path is driven end to end in test/app/shutdown.test.ts). */

const get = (url: string) =>
  new Promise<{ status: number; connection: string } | { error: string }>((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, connection: String(res.headers.connection) }),
      );
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end();
  });

describe('RunningServer.drain', () => {
  it('lets an in-flight request finish with Connection: close, then refuses new connections', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await startServer(
      async () => {
        await held;
        return new Response('done');
      },
      { host: '127.0.0.1', port: 0 },
    );
    const inFlight = get(`${server.url}/slow`);
    await new Promise((r) => setTimeout(r, 50));
    const drained = server.drain(5000);
    expect(await get(`${server.url}/late`)).toEqual({ error: 'ECONNREFUSED' });
    release();
    expect(await inFlight).toEqual({ status: 200, connection: 'close' });
    expect(await drained).toEqual({ closedGracefully: 1, destroyedAtGrace: 0, unfinishedAtGrace: 0 });
  });

  it('waits for a request whose client went away: the handler finishes before the drain resolves', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handled: string[] = [];
    const server = await startServer(
      async () => {
        await held;
        // Where the service writes the request's audit record: after the drain, the stores are closed.
        handled.push('audited');
        return new Response('done');
      },
      { host: '127.0.0.1', port: 0 },
    );
    const client = connect(server.port, '127.0.0.1');
    await once(client, 'connect');
    client.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 50));
    client.destroy(); // the consumer gives up; the handler is still waiting on its engine
    await once(client, 'close');
    let resolvedWith: unknown;
    const drained = server.drain(5000).then((result) => {
      resolvedWith = result;
      handled.push('drained');
    });
    await new Promise((r) => setTimeout(r, 200));
    // Every connection has ended, but the handler has not: the drain is not over.
    expect(resolvedWith).toBeUndefined();
    release();
    await drained;
    expect(handled).toEqual(['audited', 'drained']);
    expect(resolvedWith).toEqual({ closedGracefully: 0, destroyedAtGrace: 0, unfinishedAtGrace: 0 });
  });

  it('destroys what is still open when the grace ends: a stuck request, a half-open socket', async () => {
    const server = await startServer(() => new Promise<Response>(() => {}), { host: '127.0.0.1', port: 0 });
    const stuck = get(`${server.url}/stuck`);
    const halfOpen = connect(server.port, '127.0.0.1');
    await once(halfOpen, 'connect');
    halfOpen.write('GET / HTTP/1.1\r\nHost: x\r\n'); // headers never finished
    halfOpen.on('error', () => {});
    await new Promise((r) => setTimeout(r, 50));
    expect(await server.drain(200)).toEqual({
      closedGracefully: 0,
      destroyedAtGrace: 2,
      unfinishedAtGrace: 1,
    });
    expect(await stuck).toEqual({ error: 'ECONNRESET' });
  });

  it('closes an idle keep-alive connection once it has been idle for the idle period', async () => {
    const server = await startServer(() => new Response('ok'), { host: '127.0.0.1', port: 0 });
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await once(socket, 'data');
    const closed = once(socket, 'close');
    const started = Date.now();
    expect(await server.drain(5000, 100)).toEqual({
      closedGracefully: 1,
      destroyedAtGrace: 0,
      unfinishedAtGrace: 0,
    });
    await closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });
});
