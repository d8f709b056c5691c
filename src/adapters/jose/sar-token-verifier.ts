import { errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { SarTokenClaims } from '../../domain/access/sar-caller.js';
import { StoreUnavailableError, UnauthenticatedError } from '../../domain/errors.js';
import type { SarTokenVerifier } from '../../ports/sar-token-verifier.js';
import { ALLOWED_ALGORITHMS, keySetFrom, reasonFor } from './token-verifier.js';
import { VerifiedTokens } from './verified-tokens.js';

/**
 * The SAR service's tokens at its door (decisions §23), verified with jose: the organisation's
 * authorisation server signs them (RS256 in the estate), its key set is a file or an https URL
 * fetched over verified TLS by {@link keySetFrom} (jose's remote set: cached, fetched again for
 * an unknown `kid` at most once every 30 s, given 5 s a fetch). Verified tokens are kept,
 * bounded, each until its `exp`, as the main listener's verifier keeps bearer tokens.
 */

export interface SarTokenSettings {
  /** A JWKS file path, or an https:// URL. */
  readonly jwks: string;
  /** The `iss` every token must carry. */
  readonly issuer: string;
}

export interface SarVerifierOptions {
  readonly clockToleranceSeconds?: number;
  /** How many verified tokens to keep, each until it expires. */
  readonly cacheSize?: number;
  readonly now?: () => Date;
}

/** What a refusal to answer for want of keys names, in the operator's log. */
export const SAR_KEY_SET = "the SAR service's key set";

/** A client id the trail can record: 1 to 128 visible ASCII characters. */
const CLIENT_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * Whether jose (or the fetch under it) failed for want of the key set rather than for the
 * token: a fetch that failed or timed out (a certificate not verified among them), an answer
 * that was not 200 or not JSON (jose's plain JOSEError), one that was no key set, a key in it
 * that cannot be used. Every other JOSE error is the token's.
 */
function keySetFault(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    error instanceof errors.JWKInvalid ||
    error.code === errors.JOSEError.code
  );
}

/** Why the key set could not be had, for the operator's log: a fixed word and the system's code, never a body. */
function keySetLabel(error: unknown): string {
  if (error instanceof errors.JWKSTimeout) return 'timeout';
  if (error instanceof errors.JOSEError) return 'not-a-key-set';
  const code = (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? `unreachable (${code})` : 'unreachable';
}

/** The recipient a token names: `client_id` when a usable string, else `sub`. */
function clientIdOf(payload: JWTPayload): string {
  for (const claim of [payload.client_id, payload.sub]) {
    if (typeof claim === 'string' && claim.length > 0) {
      if (!CLIENT_ID.test(claim))
        throw new UnauthenticatedError(
          'bearer',
          'the token names its client in a form this service cannot record',
        );
      return claim;
    }
  }
  throw new UnauthenticatedError('bearer', 'the token names no client (client_id or sub)');
}

/** The strings of `authorities`: none when it is absent or not an array. */
const authoritiesOf = (claim: unknown): readonly string[] =>
  Array.isArray(claim) ? claim.filter((role): role is string => typeof role === 'string') : [];

export class JoseSarTokenVerifier implements SarTokenVerifier {
  private readonly keys: JWTVerifyGetKey;
  private readonly verified: VerifiedTokens<SarTokenClaims>;
  private readonly tolerance: number;
  private readonly now: () => Date;

  /** Throws when the key set's source is refused, or its file cannot be read as a key set. */
  constructor(
    private readonly settings: SarTokenSettings,
    options: SarVerifierOptions = {},
  ) {
    this.keys = keySetFrom(settings.jwks);
    this.tolerance = options.clockToleranceSeconds ?? 30;
    this.now = options.now ?? (() => new Date());
    this.verified = new VerifiedTokens(options.cacheSize ?? 1_000, this.tolerance, this.now);
  }

  async verify(token: string): Promise<SarTokenClaims> {
    if (token.length > 8192) throw new UnauthenticatedError('bearer', 'the token is too long');
    const held = this.held(token);
    if (held !== undefined) return held;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys, {
        issuer: this.settings.issuer,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: this.tolerance,
        requiredClaims: ['exp'],
        currentDate: this.now(),
      }));
    } catch (error) {
      if (keySetFault(error)) throw new StoreUnavailableError(SAR_KEY_SET, keySetLabel(error));
      throw new UnauthenticatedError('bearer', reasonFor(error));
    }
    const claims: SarTokenClaims = {
      clientId: clientIdOf(payload),
      authorities: authoritiesOf(payload.authorities),
      expiresAt: new Date((payload.exp ?? 0) * 1000),
    };
    this.verified.keep(token, claims);
    return claims;
  }

  /** A token verified before, while it has not expired (see {@link VerifiedTokens.held}). */
  held(token: string): SarTokenClaims | undefined {
    return this.verified.held(token);
  }
}
