import type { Clock } from '../domain/needs.js';

export type { Clock };

export const systemClock: Clock = { now: () => new Date() };
