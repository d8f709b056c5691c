import type { AccessDirectory } from './access-directory.js';
import type { RateLimiter } from './rate-limiter.js';
import type { TokenVerifier } from './token-verifier.js';

/**
 * The optional members by which a port answers at once, from what this process holds, with
 * no promise and no store call: `AccessDirectory.heldAdmission`, `TokenVerifier.heldBearer`,
 * `RateLimiter.consumeNow`. The request path uses one when it is offered and answers, and
 * waits on the port's ordinary member otherwise; the two decide alike.
 *
 * A wrapper that stands for a port's calls (tracing, whose spans name each call) does not
 * offer them, so that every request it wraps goes through the calls it records.
 */
export const AT_ONCE_MEMBERS: ReadonlySet<string> = new Set<
  keyof AccessDirectory | keyof TokenVerifier | keyof RateLimiter
>(['heldAdmission', 'heldBearer', 'consumeNow']);
