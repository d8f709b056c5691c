// The package's own entry by path: Bun answers a bare `undici` with its built-in stand-in,
// which has no Agent.close and no connection pool of its own.
import { Agent, request } from 'undici/index.js';
import { UpstreamFailedError, UpstreamTimeoutError } from '../../domain/errors.js';
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

export interface ClientCredentials {
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly timeoutMs: number;
  /** The most of the token endpoint's answer that is read (`UPSTREAM_MAX_BODY_BYTES`). */
  readonly maxBodyBytes: number;
  /** The token is renewed this long before it expires. */
  readonly renewBeforeMs?: number;
  readonly now?: () => number;
}

/**
 * OAuth2 client credentials (RFC 6749 §4.4) for calls to the upstream: the token is cached
 * until shortly before it expires, and however many requests wait for a new one, it is
 * fetched once. The client authenticates with HTTP Basic (§2.3.1). A failed or malformed
 * answer from the token endpoint is a 502 (a hang past the timeout a 504); neither the
 * secret nor the token is ever in a message. `close` ends its pool's connections.
 */
export function clientCredentialsBearer(
  options: ClientCredentials,
): (() => Promise<string>) & { close(): Promise<void> } {
  const now = options.now ?? Date.now;
  const renewBefore = options.renewBeforeMs ?? 30_000;
  let cached: { token: string; renewAt: number } | undefined;
  let inFlight: Promise<string> | undefined;
  // Its own pool, so that what is read of an answer is bounded like the case store's.
  const dispatcher = new Agent({ maxResponseSize: options.maxBodyBytes });

  const fetchToken = async (): Promise<string> => {
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
    cached = { token, renewAt: now() + Math.max(lifetimeMs - renewBefore, lifetimeMs / 2) };
    return token;
  };

  const token = async () => {
    if (cached && now() < cached.renewAt) return cached.token;
    inFlight ??= fetchToken().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  // Closed with the store: its pool's connections to the token endpoint end with it.
  return Object.assign(token, { close: () => dispatcher.close() });
}
