import { describe, expect, it } from 'vitest';
import { wallClockOf } from '../../src/domain/wall-clock.js';

/** The offset in force at `iso` in `zone`, in minutes: the wall clock less the instant. */
const offsetAt = (zone: string, iso: string) => {
  const instant = Date.parse(iso);
  return (wallClockOf(zone)(instant) - instant) / 60_000;
};

describe('a time zone’s wall clock (the platform’s tz rules)', () => {
  it('shows London’s clocks: GMT in winter, BST in summer, changing at 01:00 UTC', () => {
    const london = wallClockOf('Europe/London');
    expect(new Date(london(Date.parse('2026-07-01T09:00:00Z'))).toISOString()).toBe(
      '2026-07-01T10:00:00.000Z',
    );
    expect(offsetAt('Europe/London', '2026-01-16T16:22:54Z')).toBe(0);
    expect(offsetAt('Europe/London', '2026-03-29T00:59:59Z')).toBe(0);
    expect(offsetAt('Europe/London', '2026-03-29T01:00:00Z')).toBe(60);
    expect(offsetAt('Europe/London', '2026-10-25T00:59:59Z')).toBe(60);
    expect(offsetAt('Europe/London', '2026-10-25T01:00:00Z')).toBe(0);
  });

  it('keeps whole seconds, across a day and a year, and other zones’ offsets', () => {
    expect(new Date(wallClockOf('UTC')(Date.parse('2025-12-31T23:59:59.750Z'))).toISOString()).toBe(
      '2025-12-31T23:59:59.000Z',
    );
    expect(offsetAt('America/St_Johns', '2026-01-10T12:00:00Z')).toBe(-210);
    expect(offsetAt('Asia/Kolkata', '2026-01-10T20:00:00Z')).toBe(330);
  });

  it('refuses a zone the platform does not know', () => {
    expect(() => wallClockOf('Not/A_Zone')).toThrow(RangeError);
  });
});
