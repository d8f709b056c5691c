import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
// The package's own entry by path, as the other adapters take it (Bun's bare `undici` is a stand-in).
import { Agent, fetch as undiciFetch } from 'undici/index.js';
import { jwksSourceProblem } from '../../domain/access/jwks-source.js';
import type { BearerClaims, OnBehalfOfClaims, OnBehalfOfSettings } from '../../domain/access/model.js';
import { UnauthenticatedError } from '../../domain/errors.js';
import type { TokenVerifier } from '../../ports/token-verifier.js';
import { readRegularFile, readRegularFileSync } from '../shared/named-files.js';
import { VerifiedTokens } from './verified-tokens.js';

/** Asymmetric algorithms only: never `none`, never an HMAC that a public key could sign. */
export const ALLOWED_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
];

export interface BearerSettings {
  /** A JWKS file path, or an https:// URL. */
  readonly jwks: string;
  readonly issuer: string;
  readonly audience: string;
}

export interface JoseVerifierOptions {
  readonly bearer: BearerSettings | null;
  readonly clockToleranceSeconds?: number;
  /** How many verified bearer tokens to keep, each until it expires. */
  readonly cacheSize?: number;
  readonly now?: () => Date;
}

/** Most a JWKS file may hold: a key set is a few KB. */
const MAX_JWKS_BYTES = 1024 * 1024;

/** How a JWKS file is named in a refusal (the caller adds the variable: `BEARER_JWKS: JWKS file …`). */
const JWKS_FILE = 'JWKS file';

const refuse = (message: string) => new Error(message);

/**
 * The JWKS fetches' own pool: the server's certificate verified whatever the runtime is told
 * (NODE_TLS_REJECT_UNAUTHORIZED; decisions §20), where jose's default fetch would follow it.
 */
let verifiedPool: Agent | undefined;
const verifiedFetch: typeof fetch = (url, init) => {
  // HTTP/1.1 only, as the upstream's pool (said: undici 8 takes HTTP/2 when offered).
  verifiedPool ??= new Agent({ allowH2: false, connect: { rejectUnauthorized: true } });
  return undiciFetch(url as string, {
    ...(init as object),
    dispatcher: verifiedPool,
  }) as unknown as Promise<Response>;
};

/** The remote key set of an https:// URL (fetched and cached by jose), or undefined for a file path; other URLs refused. */
function remoteKeySet(source: string): JWTVerifyGetKey | undefined {
  const problem = jwksSourceProblem(source);
  if (problem !== undefined) throw new Error(`JWKS: ${problem}`);
  if (!/^https:\/\//i.test(source)) return undefined;
  return createRemoteJWKSet(new URL(source), {
    cooldownDuration: 30_000,
    cacheMaxAge: 10 * 60_000,
    timeoutDuration: 5_000,
    [customFetch]: verifiedFetch,
  });
}

/** The key set a JWKS file's text holds: public keys only. */
function localKeySet(source: string, text: string): JWTVerifyGetKey {
  let json: JSONWebKeySet;
  try {
    json = JSON.parse(text) as JSONWebKeySet;
  } catch (error) {
    throw new Error(`${JWKS_FILE} ${source} cannot be read as JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(json?.keys) || json.keys.some((k) => 'd' in k)) {
    throw new Error(`${JWKS_FILE} ${source} must hold { "keys": [...] } with public keys only`);
  }
  return createLocalJWKSet(json);
}

/**
 * Loads a key set from a file (read once, at start: the shared reader, so a FIFO, a directory
 * or a device is refused, never waited on) or an https URL (fetched and cached by jose).
 */
export function keySetFrom(source: string): JWTVerifyGetKey {
  const remote = remoteKeySet(source);
  if (remote !== undefined) return remote;
  const file = readRegularFileSync(JWKS_FILE, source, refuse, { maxBytes: MAX_JWKS_BYTES });
  return localKeySet(source, file.bytes.toString('utf8'));
}

/** {@link keySetFrom} without blocking the event loop: for a key set first needed while serving (a client's on-behalf-of JWKS). */
export async function loadKeySet(source: string): Promise<JWTVerifyGetKey> {
  const remote = remoteKeySet(source);
  if (remote !== undefined) return remote;
  const file = await readRegularFile(JWKS_FILE, source, refuse, { maxBytes: MAX_JWKS_BYTES });
  return localKeySet(source, file.bytes.toString('utf8'));
}

/** A reason safe to show a client: what failed, never token material. */
export function reasonFor(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'the token has an unexpected issuer';
    if (error.claim === 'aud') return 'the token has an unexpected audience';
    if (error.claim === 'nbf') return 'the token is not yet valid';
    if (error.claim === 'exp') return 'the token has no valid expiry';
    return `the token's ${error.claim} claim is not valid`;
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return 'the token is signed with an algorithm that is not allowed';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no trusted key matches the token';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
    return 'the trusted keys could not be loaded';
  if (error instanceof errors.JOSENotSupported) return 'the token uses an unsupported algorithm or key';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid)
    return 'the token is malformed';
  return 'the token could not be verified';
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/**
 * Verifies bearer and on-behalf-of JWTs with jose. Verified bearer tokens are cached (bounded,
 * each until its `exp`), so a keep-alive client does not pay a signature check per request;
 * the per-request binding checks (client id, certificate) still run every time.
 */
/** RFC 8705 `x5t#S256`: the base64url SHA-256 of a DER certificate, 43 characters, unpadded. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/**
 * The certificate a token is confirmed by (RFC 7800 `cnf`, RFC 8705 `x5t#S256`), or null
 * for a token that carries no `cnf`. Fails closed: a `cnf` that is not an object, that
 * confirms nothing, that holds a thumbprint of any other shape, or that names any other
 * confirmation method (`jkt` for DPoP, `jwk`, `kid`, …) cannot be checked here, so the token
 * is refused rather than taken as unbound. The reason names no member and no value of the
 * token.
 */
export function certificateBindingOf(scheme: 'bearer' | 'on-behalf-of', cnf: unknown): string | null {
  if (cnf === undefined) return null;
  const refuse = (reason: string): never => {
    throw new UnauthenticatedError(scheme, reason);
  };
  if (typeof cnf !== 'object' || cnf === null || Array.isArray(cnf)) {
    return refuse("the token's cnf claim is not an object");
  }
  const members = Object.keys(cnf);
  if (members.length === 0) return refuse("the token's cnf claim confirms nothing");
  if (members.some((member) => member !== 'x5t#S256')) {
    return refuse('the token is bound by a confirmation method this service cannot check');
  }
  const thumbprint = (cnf as Record<string, unknown>)['x5t#S256'];
  if (typeof thumbprint !== 'string' || !THUMBPRINT.test(thumbprint)) {
    return refuse("the token's certificate thumbprint is not a base64url SHA-256 thumbprint");
  }
  return thumbprint;
}

export class JoseTokenVerifier implements TokenVerifier {
  private readonly bearerKeys: JWTVerifyGetKey | null;
  private readonly oboKeys = new Map<string, JWTVerifyGetKey>();
  private readonly verified: VerifiedTokens<BearerClaims>;
  private readonly tolerance: number;
  private readonly now: () => Date;

  constructor(private readonly options: JoseVerifierOptions) {
    this.bearerKeys = options.bearer ? keySetFrom(options.bearer.jwks) : null;
    this.tolerance = options.clockToleranceSeconds ?? 30;
    this.now = options.now ?? (() => new Date());
    this.verified = new VerifiedTokens(options.cacheSize ?? 10_000, this.tolerance, this.now);
  }

  async verifyBearer(token: string): Promise<BearerClaims> {
    const bearer = this.options.bearer;
    if (this.bearerKeys === null || bearer === null)
      throw new UnauthenticatedError('bearer', 'bearer tokens are not configured');
    const held = this.heldBearer(token);
    if (held !== undefined) return held;
    const payload = await this.verify('bearer', token, this.bearerKeys, bearer.issuer, bearer.audience);
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : (payload.sub ?? null);
    const claims: BearerClaims = {
      clientId,
      certificateThumbprint: certificateBindingOf('bearer', payload.cnf),
      expiresAt: new Date((payload.exp ?? 0) * 1000),
    };
    this.verified.keep(token, claims);
    return claims;
  }

  /** A bearer token verified before, while it has not expired (see {@link VerifiedTokens.held}). */
  heldBearer(token: string): BearerClaims | undefined {
    return this.verified.held(token);
  }

  async verifyOnBehalfOf(token: string, settings: OnBehalfOfSettings): Promise<OnBehalfOfClaims> {
    if (settings.jwks === null || settings.issuer === null || settings.audience === null) {
      throw new UnauthenticatedError(
        'on-behalf-of',
        'on-behalf-of tokens are not configured for this client',
      );
    }
    let keys = this.oboKeys.get(settings.jwks);
    if (keys === undefined) {
      try {
        // Read while serving: never blocking the event loop, never waiting on a FIFO.
        keys = await loadKeySet(settings.jwks);
      } catch {
        throw new UnauthenticatedError('on-behalf-of', 'the trusted keys could not be loaded');
      }
      this.oboKeys.set(settings.jwks, keys);
    }
    const payload = await this.verify('on-behalf-of', token, keys, settings.issuer, settings.audience);
    const email = payload[settings.emailClaim];
    if (typeof email !== 'string' || !EMAIL.test(email)) {
      throw new UnauthenticatedError(
        'on-behalf-of',
        `the token has no e-mail in its ${settings.emailClaim} claim`,
      );
    }
    return {
      email: email.toLowerCase(),
      certificateThumbprint: certificateBindingOf('on-behalf-of', payload.cnf),
    };
  }

  private async verify(
    scheme: 'bearer' | 'on-behalf-of',
    token: string,
    keys: JWTVerifyGetKey,
    issuer: string,
    audience: string,
  ): Promise<JWTPayload> {
    if (token.length > 8192) throw new UnauthenticatedError(scheme, 'the token is too long');
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer,
        audience,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: this.tolerance,
        requiredClaims: ['exp'],
        currentDate: this.now(),
      });
      return payload;
    } catch (error) {
      throw new UnauthenticatedError(scheme, reasonFor(error));
    }
  }
}
