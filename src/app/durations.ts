/**
 * Durations and rate limits as the CLI reads them: the same rules the service applies,
 * from the domain.
 */
export { parseDuration, parseQuota as parseRateLimit } from '../domain/access/quota.js';
