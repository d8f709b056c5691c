import { describe, expect, it } from 'vitest';
import { isTimeZone, localDateTimeReader } from '../../../src/adapters/upstream/local-time.js';

// Runs under Node, Bun and Deno (scripts/test-runtimes.mjs): each platform's own zone data.
describe('a local date-time read in its zone and given its offset', () => {
  const london = localDateTimeReader('Europe/London');

  it.each([
    ['2026-01-16T16:22:54', '2026-01-16T16:22:54+00:00'],
    ['2025-07-01T10:00:00', '2025-07-01T10:00:00+01:00'],
    // Fractions are kept to the digit; a time without seconds gains them.
    ['2025-07-01T10:00:00.123456789', '2025-07-01T10:00:00.123456789+01:00'],
    ['2026-01-16T16:22', '2026-01-16T16:22:00+00:00'],
    // Either side of the spring change (01:00 GMT → 02:00 BST on 2026-03-29).
    ['2026-03-29T00:59:59', '2026-03-29T00:59:59+00:00'],
    ['2026-03-29T02:00:00', '2026-03-29T02:00:00+01:00'],
    // Never on the wall clock: moved forward by the gap, as Temporal's 'compatible' does.
    ['2026-03-29T01:30:00', '2026-03-29T02:30:00+01:00'],
    // Twice on the wall clock (02:00 BST → 01:00 GMT on 2026-10-25): the earlier instant.
    ['2026-10-25T01:30:00', '2026-10-25T01:30:00+01:00'],
    ['2026-10-25T00:59:59', '2026-10-25T00:59:59+01:00'],
    ['2026-10-25T02:00:00', '2026-10-25T02:00:00+00:00'],
    // Leap day.
    ['2028-02-29T12:00:00', '2028-02-29T12:00:00+00:00'],
  ])('Europe/London: %s is %s', (local, zoned) => {
    expect(london(local)).toBe(zoned);
  });

  it('follows the zone it is given: New York, Lord Howe (a half-hour change), UTC', () => {
    const newYork = localDateTimeReader('America/New_York');
    expect(newYork('2026-01-16T16:22:54')).toBe('2026-01-16T16:22:54-05:00');
    expect(newYork('2026-03-08T02:30:00')).toBe('2026-03-08T03:30:00-04:00');
    expect(newYork('2026-11-01T01:30:00')).toBe('2026-11-01T01:30:00-04:00');
    const lordHowe = localDateTimeReader('Australia/Lord_Howe');
    expect(lordHowe('2026-04-05T01:45:00')).toBe('2026-04-05T01:45:00+11:00');
    expect(lordHowe('2026-10-04T02:15:00')).toBe('2026-10-04T02:45:00+11:00');
    expect(localDateTimeReader('UTC')('2025-07-01T10:00:00')).toBe('2025-07-01T10:00:00+00:00');
  });

  it.each([
    '2026-02-30T10:00:00',
    '2027-02-29T10:00:00',
    '2026-01-16T24:00:00',
    '2026-01-16T16:60:00',
    '2026-01-16',
    '2026-01-16T16:22:54+00:00',
    'yesterday',
    '',
  ])('refuses %j: not a local date-time on the calendar', (text) => {
    expect(london(text)).toBeUndefined();
  });

  it('gives back the wall clock of every quarter-hour of a year, each clock change included, in three zones', () => {
    // The oracle is the platform's formatter read the other way: an instant's wall clock in
    // the zone, converted, must be an instant with that same wall clock. One reader per zone
    // converts the whole year, so the hours it keeps are used across every change.
    const start = Date.UTC(2026, 0, 1);
    for (const zone of ['Europe/London', 'America/New_York', 'Australia/Lord_Howe']) {
      // Swedish dates are ISO 8601 dates: `2026-01-02 00:05:07`.
      const wallOf = new Intl.DateTimeFormat('sv-SE', {
        timeZone: zone,
        dateStyle: 'short',
        timeStyle: 'medium',
        hourCycle: 'h23',
      });
      const wall = (t: number) => wallOf.format(t).replace(' ', 'T');
      const reader = localDateTimeReader(zone);
      const wrong: string[] = [];
      for (let t = start; t < start + 365 * 86_400_000; t += 15 * 60_000) {
        const local = wall(t);
        const zoned = reader(local);
        if (zoned === undefined || wall(Date.parse(zoned)) !== local) wrong.push(`${local} → ${zoned}`);
      }
      expect(wrong, zone).toEqual([]);
    }
  });

  it('knows IANA zones and refuses anything else', () => {
    for (const zone of ['Europe/London', 'UTC', 'America/New_York', 'europe/london'])
      expect(isTimeZone(zone)).toBe(true);
    for (const zone of ['Europe/Londres', 'GMT+25', '', ' ', 'BST!', '+01:00', '-0500'])
      expect(isTimeZone(zone)).toBe(false);
  });
});
