import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/**
 * The organisation's authorisation server, as the SAR service's door meets it (decisions §23):
 * RS256 signing keys, each with its `kid`, published as a JWKS (a file, or over HTTPS with a
 * certificate of the test PKI), and client-credentials tokens as it mints them: `iss`, `exp`,
 * `client_id`, `scope` and the `authorities` array of roles.
 */

export const SAR_ISSUER = 'https://auth.example.test/auth/issuer';
export const SAR_ROLE = 'ROLE_SAR_DATA_ACCESS';
export const SAR_CLIENT = 'hmpps-subject-access-request';

export interface SigningKey {
  readonly kid: string;
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  readonly publicJwk: JWK;
}

/** A new RS256 key pair named `kid`. */
export async function signingKey(kid: string): Promise<SigningKey> {
  const pair = await generateKeyPair('RS256', { extractable: true });
  return {
    kid,
    privateKey: pair.privateKey,
    publicJwk: { ...(await exportJWK(pair.publicKey)), kid, alg: 'RS256', use: 'sig' },
  };
}

/** The JWKS that publishes `keys`. */
export const jwksOf = (keys: readonly SigningKey[]) => ({ keys: keys.map((key) => key.publicJwk) });

export interface TokenOptions {
  /** Signed with this key (its `kid` in the header unless `kid` says otherwise). */
  readonly key: SigningKey;
  readonly kid?: string;
  readonly issuer?: string;
  /** Seconds from now; negative: expired. */
  readonly expiresIn?: number;
  /** The whole claim set but `iss`, `iat` and `exp`; by default the SAR service's. */
  readonly claims?: Record<string, unknown>;
}

/** A client-credentials token as the authorisation server mints it for the SAR service. */
export function sarToken(options: TokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(
    options.claims ?? {
      authorities: [SAR_ROLE],
      client_id: SAR_CLIENT,
      scope: ['read'],
      grant_type: 'client_credentials',
    },
  )
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: options.kid ?? options.key.kid })
    .setIssuer(options.issuer ?? SAR_ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 300))
    .sign(options.key.privateKey);
}

/** An unsigned token (`alg: none`), as a forger would send it. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

/** A token signed with HS256 under `secret` (an algorithm the door never takes). */
export function hmacToken(claims: Record<string, unknown>, secret: string): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: 'as-1' })
    .setIssuer(SAR_ISSUER)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(secret));
}

/**
 * How the JWKS endpoint answers: the key set; not JSON; a 500; nothing at all (the connection
 * held open); the connection cut.
 */
export type JwksMode = 'serve' | 'not-json' | 'error' | 'hang' | 'drop';

export interface JwksServer {
  readonly url: string;
  /** How many requests reached it. */
  readonly requests: () => number;
  /** The keys it publishes from now on. */
  publish(keys: readonly SigningKey[]): void;
  answer(mode: JwksMode): void;
  close(): Promise<void>;
}

/** The authorisation server's JWKS endpoint over HTTPS, with `tls`'s certificate (for localhost). */
export async function startJwksServer(
  tls: { readonly cert: string; readonly key: string },
  keys: readonly SigningKey[],
): Promise<JwksServer> {
  let published = jwksOf(keys);
  let mode: JwksMode = 'serve';
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    requests++;
    if (mode === 'hang') return;
    if (mode === 'drop') {
      req.socket.destroy();
      return;
    }
    if (mode === 'error') {
      res.writeHead(500).end('internal error');
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(mode === 'not-json' ? '<html>not a key set</html>' : JSON.stringify(published));
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `https://localhost:${port}/.well-known/jwks.json`,
    requests: () => requests,
    publish: (next) => {
      published = jwksOf(next);
    },
    answer: (next) => {
      mode = next;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then let go). */
export async function closedPort(): Promise<number> {
  const { createServer: createPlain } = await import('node:net');
  const server = createPlain();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
