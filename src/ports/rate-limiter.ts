/** The rate limiter port; its contract is documented where it is declared. */
export type { RateLimiter } from '../domain/access/rate-limit.js';
