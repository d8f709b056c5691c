// The package's own entry by path: Bun answers a bare `undici` with its built-in stand-in,
// which has no Agent.close and no connection pool of its own.
import { Agent, request } from 'undici/index.js';
import { UpstreamFailedError, UpstreamTimeoutError } from '../../domain/errors.js';
import { isCertificateFailure } from '../shared/tls-failures.js';
import { BodyRefused, boundedText, IDENTITY_ONLY } from './body-limit.js';

const UPSTREAM = 'case store upstream';

/** The token endpoint's answer as JSON; undefined when there is none or it is not JSON. */
function jsonOf(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What the token endpoint's connections verify it with and present to it: the CA bundle
 * (absent: the runtime's public CAs) and the client certificate with its key, as PEM.
 */
export interface TokenEndpointTls {
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

/** The pool to the token endpoint: verification always on, whatever `NODE_TLS_REJECT_UNAUTHORIZED` says. */
function tokenPool(tls: TokenEndpointTls | undefined, maxBodyBytes: number): Agent {
  return new Agent({
    // HTTP/1.1 only, as the upstream's pool (said: undici 8 takes HTTP/2 when offered).
    allowH2: false,
    connect: {
      rejectUnauthorized: true,
      ...(tls?.ca !== undefined ? { ca: tls.ca } : {}),
      ...(tls?.cert !== undefined ? { cert: tls.cert } : {}),
      ...(tls?.key !== undefined ? { key: tls.key } : {}),
    },
    maxResponseSize: maxBodyBytes,
  });
}

export interface ClientCredentials {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly timeoutMs: number;
  /** The most of the token endpoint's answer that is read (`UPSTREAM_MAX_BODY_BYTES`). */
  readonly maxBodyBytes: number;
  /** The token endpoint's TLS (an `https://` one): its CA, and the client certificate presented when it asks. */
  readonly tls?: TokenEndpointTls;
  /** The token is renewed this long before it expires. */
  readonly renewBeforeMs?: number;
  readonly now?: () => number;
}

/**
 * OAuth2 client credentials (RFC 6749 §4.4) for calls to the upstream: the token is cached
 * until shortly before it expires, and however many requests wait for a new one, it is
 * fetched once. The client authenticates with HTTP Basic (§2.3.1). A failed or malformed
 * answer from the token endpoint is a 502 (a hang past the timeout a 504), one whose
 * certificate does not verify logged as `token-endpoint-untrusted`; neither the secret nor
 * the token is ever in a message. `setTls` takes reloaded TLS files; `close` ends its pool's
 * connections.
 */
export function clientCredentialsBearer(options: ClientCredentials): (() => Promise<string>) & {
  setTls(tls: TokenEndpointTls): void;
  close(): Promise<void>;
} {
  const now = options.now ?? Date.now;
  const renewBefore = options.renewBeforeMs ?? 30_000;
  let cached: { token: string; renewAt: number } | undefined;
  let inFlight: Promise<string> | undefined;
  // Bumped by each new set of TLS files: a token fetched with the set before is not kept.
  let generation = 0;
  // Its own pool, so that what is read of an answer is bounded like the case store's.
  let dispatcher = tokenPool(options.tls, options.maxBodyBytes);

  const fetchToken = async (): Promise<string> => {
    const fetchedIn = generation;
    const basic = Buffer.from(
      `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`,
    ).toString('base64');
    let status: number;
    let body: unknown;
    try {
      const response = await request(options.tokenUrl, {
        method: 'POST',
        dispatcher,
        headers: {
          authorization: `Basic ${basic}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          ...IDENTITY_ONLY,
        },
        body: 'grant_type=client_credentials',
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      status = response.statusCode;
      const text = await boundedText(response, options.maxBodyBytes).catch((error: unknown) => {
        if (error instanceof BodyRefused) throw error;
        return undefined;
      });
      body = jsonOf(text);
    } catch (error) {
      if (error instanceof BodyRefused)
        throw new UpstreamFailedError(UPSTREAM, `token-endpoint-${error.label}`, error.mismatch);
      if ((error as Error).name === 'TimeoutError')
        throw new UpstreamTimeoutError(`${UPSTREAM} token endpoint`);
      const code = (error as { code?: string }).code;
      if (isCertificateFailure(code)) {
        // A configuration to fix (UPSTREAM_TOKEN_TLS_CA, UPSTREAM_TLS_CA), not an endpoint that is down.
        throw new UpstreamFailedError(UPSTREAM, 'token-endpoint-untrusted', {
          field: '(certificate)',
          reason: code ?? 'did not verify',
        });
      }
      throw new UpstreamFailedError(UPSTREAM, 'token-endpoint-unreachable');
    }
    const { access_token: token, expires_in: expiresIn } = (body ?? {}) as {
      access_token?: unknown;
      expires_in?: unknown;
    };
    if (status !== 200 || typeof token !== 'string' || token.length === 0) {
      throw new UpstreamFailedError(UPSTREAM, `token-endpoint-${status}`);
    }
    const lifetimeMs = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn * 1000 : 60_000;
    if (fetchedIn === generation) {
      cached = { token, renewAt: now() + Math.max(lifetimeMs - renewBefore, lifetimeMs / 2) };
    }
    return token;
  };

  const token = async () => {
    if (cached && now() < cached.renewAt) return cached.token;
    if (inFlight === undefined) {
      const fetching = fetchToken().finally(() => {
        if (inFlight === fetching) inFlight = undefined;
      });
      inFlight = fetching;
    }
    return inFlight;
  };
  return Object.assign(token, {
    /**
     * New TLS files (a rotated client certificate, a new CA): the next token is fetched with
     * them, since one issued to the certificate before may be bound to it (RFC 8705). The
     * pool in use finishes its calls, then closes.
     */
    setTls: (tls: TokenEndpointTls) => {
      generation++;
      cached = undefined;
      inFlight = undefined;
      const previous = dispatcher;
      dispatcher = tokenPool(tls, options.maxBodyBytes);
      void previous.close().catch(() => {});
    },
    // Closed with the store: its pool's connections to the token endpoint end with it.
    close: () => dispatcher.close(),
  });
}
