import { InMemoryRateLimiter } from '../../src/adapters/memory/rate-limiter.js';
import { describeRateLimiterContract } from './rate-limiter.contract.js';

describeRateLimiterContract('memory', () => new InMemoryRateLimiter(), { atOnce: true });
