import { describe, expect, it } from 'vitest';
import * as errors from '../../src/domain/errors.js';

/** A domain error class (the abstract base and the helpers are not). */
const isErrorClass = (value: unknown): value is new (...args: unknown[]) => errors.DomainError =>
  typeof value === 'function' &&
  value !== errors.DomainError &&
  value.prototype instanceof errors.DomainError;

// Every domain error class, as the module exports it.
const classes = Object.entries(errors).flatMap(([name, value]) =>
  isErrorClass(value) ? [[name, value] as const] : [],
);

// What the two constructors that read their arguments need; the others take any strings.
const ARGUMENTS: Record<string, unknown[]> = {
  RateLimitedError: [{ limit: 1, remaining: 0, resetMs: 500, windowMs: 1000 }],
  RenewTooEarlyError: [null, 30],
};

describe('domain errors', () => {
  it('finds every error class the module exports', () => {
    expect(classes.length).toBeGreaterThanOrEqual(18);
  });

  for (const [exported, Class] of classes)
    it(`${exported} is named after its class, whatever its constructor takes`, () => {
      const error: errors.DomainError = Reflect.construct(Class, ARGUMENTS[exported] ?? ['x', 'y']);
      expect(error.name).toBe(exported);
      expect(String(error)).toMatch(new RegExp(`^${exported}: `));
      expect(errors.isDomainError(error)).toBe(true);
    });
});
