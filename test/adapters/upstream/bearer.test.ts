import { OAuth2Server } from 'oauth2-mock-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentialsBearer } from '../../../src/adapters/upstream/bearer.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../../src/adapters/upstream/settings.js';
import { UpstreamFailedError } from '../../../src/domain/errors.js';

/** OAuth2 client credentials against a real token server (oauth2-mock-server) on loopback. */
let server: OAuth2Server;
let tokenUrl: string;
const issued: string[] = [];
const basics: string[] = [];

beforeAll(async () => {
  server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  tokenUrl = `${server.issuer.url}/token`;
  server.service.on('beforeResponse', (response: { body: { access_token?: string } }, req) => {
    if (response.body.access_token) issued.push(response.body.access_token);
    basics.push(String((req as { headers: Record<string, string> }).headers.authorization ?? ''));
  });
});
afterAll(async () => {
  await server.stop();
});

describe('OAuth2 client credentials for the upstream', () => {
  it('fetches one token however many requests wait, sends the client with HTTP Basic, and caches it', async () => {
    issued.length = 0;
    basics.length = 0;
    const bearer = clientCredentialsBearer({
      tokenUrl,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      clientId: 'case-read',
      clientSecret: 's3cret:with/odd chars',
      timeoutMs: 2000,
    });
    const tokens = await Promise.all(Array.from({ length: 10 }, () => bearer()));
    expect(issued).toHaveLength(1);
    expect(new Set(tokens)).toEqual(new Set(issued));
    expect(tokens[0]?.split('.')).toHaveLength(3);
    expect(basics[0]).toBe(
      `Basic ${Buffer.from(`case-read:${encodeURIComponent('s3cret:with/odd chars')}`).toString('base64')}`,
    );
    expect(await bearer()).toBe(tokens[0]);
    expect(issued).toHaveLength(1);
  });

  it('renews the token shortly before it expires', async () => {
    issued.length = 0;
    let now = 1_000_000;
    const bearer = clientCredentialsBearer({
      tokenUrl,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      clientId: 'case-read',
      clientSecret: 'x',
      timeoutMs: 2000,
      renewBeforeMs: 30_000,
      now: () => now,
    });
    const first = await bearer();
    // The mock's tokens live 3600 s: renewed 30 s before that, not earlier.
    now += 3_569_000;
    expect(await bearer()).toBe(first);
    now += 2000;
    const second = await bearer();
    expect(issued).toHaveLength(2);
    expect(second).toBe(issued[1]);
  });

  it('a token endpoint that refuses or cannot be reached is a 502 naming neither secret nor token', async () => {
    server.service.once('beforeResponse', (response: { statusCode: number; body: unknown }) => {
      response.statusCode = 401;
      response.body = { error: 'invalid_client' };
    });
    const refused = await clientCredentialsBearer({
      tokenUrl,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      clientId: 'c',
      clientSecret: 'topsecret',
      timeoutMs: 2000,
    })().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamFailedError);
    expect((refused as UpstreamFailedError).logLabel).toBe('token-endpoint-401');
    expect(JSON.stringify(refused)).not.toContain('topsecret');
    const unreachable = await clientCredentialsBearer({
      tokenUrl: 'http://127.0.0.1:1/token',
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      clientId: 'c',
      clientSecret: 'topsecret',
      timeoutMs: 2000,
    })().catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(UpstreamFailedError);
  });

  it('an answer from the token endpoint longer than UPSTREAM_MAX_BODY_BYTES is a 502, read no further', async () => {
    server.service.once('beforeResponse', (response: { body: Record<string, unknown> }) => {
      response.body = { ...response.body, padding: 'x'.repeat(8192) };
    });
    const refused = await clientCredentialsBearer({
      tokenUrl,
      maxBodyBytes: 4096,
      clientId: 'c',
      clientSecret: 'topsecret',
      timeoutMs: 2000,
    })().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamFailedError);
    expect((refused as UpstreamFailedError).logLabel).toBe('token-endpoint-body-too-large');
    expect((refused as UpstreamFailedError).mismatch?.reason).toMatch(/UPSTREAM_MAX_BODY_BYTES \(4096\)/);
  });
});

describe('the token endpoint’s pool', () => {
  it('is closed with the store: its keep-alive connection to the endpoint ends on close()', async () => {
    const { createServer } = await import('node:http');
    const sockets = new Set<import('node:net').Socket>();
    const endpoint = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: 'a-token', expires_in: 3600, token_type: 'Bearer' }));
    });
    endpoint.keepAliveTimeout = 60_000;
    endpoint.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const { port } = endpoint.address() as import('node:net').AddressInfo;
    try {
      const bearer = clientCredentialsBearer({
        tokenUrl: `http://127.0.0.1:${port}/token`,
        clientId: 'case-read',
        clientSecret: 'secret',
        timeoutMs: 2000,
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      });
      expect(await bearer()).toBe('a-token');
      // Kept alive for the next renewal while the store is open.
      expect(sockets.size).toBe(1);
      const [socket] = [...sockets] as [import('node:net').Socket];
      const closed = new Promise((resolve) => socket.once('close', resolve));
      await bearer.close();
      await closed;
      expect(sockets.size).toBe(0);
    } finally {
      endpoint.closeAllConnections();
      await new Promise((resolve) => endpoint.close(resolve));
    }
  });
});

describe('new TLS files for the token endpoint (setTls, at a reload)', () => {
  it('the next token is fetched anew, and one that was in flight under the old files is not kept', async () => {
    const { createServer } = await import('node:http');
    let served = 0;
    let releaseFirst: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstArrived: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const endpoint = createServer((req, res) => {
      served++;
      const n = served;
      req.resume();
      const answer = () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ access_token: `token-${n}`, expires_in: 3600, token_type: 'Bearer' }));
      };
      if (n === 1) {
        firstArrived();
        void firstHeld.then(answer);
      } else answer();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const { port } = endpoint.address() as import('node:net').AddressInfo;
    const bearer = clientCredentialsBearer({
      tokenUrl: `http://127.0.0.1:${port}/token`,
      clientId: 'case-read',
      clientSecret: 'secret',
      timeoutMs: 5000,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    });
    try {
      const inFlight = bearer();
      await arrived;
      // A reload while the first fetch is answered: that token belongs to the files before.
      bearer.setTls({});
      releaseFirst();
      expect(await inFlight).toBe('token-1');
      expect(await bearer()).toBe('token-2');
      expect(await bearer()).toBe('token-2');
      expect(served).toBe(2);
    } finally {
      await bearer.close();
      endpoint.closeAllConnections();
      await new Promise((resolve) => endpoint.close(resolve));
    }
  });
});
