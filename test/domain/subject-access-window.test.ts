import { describe, expect, it } from 'vitest';
import { InvalidSubjectAccessRequestError } from '../../src/domain/errors.js';
import { sarWindow } from '../../src/domain/subject-access/window.js';

const now = new Date('2026-11-28T12:00:00Z');
const iso = (date: Date | undefined) => date?.toISOString();

describe('the window of a subject access request (whole days in Europe/London, inclusive)', () => {
  it('in winter (GMT) a day is midnight to midnight UTC', () => {
    const window = sarWindow('2026-01-10', '2026-01-12', now);
    expect(iso(window.from)).toBe('2026-01-10T00:00:00.000Z');
    expect(iso(window.to)).toBe('2026-01-13T00:00:00.000Z');
  });

  it('in summer (BST) a day begins at 23:00 UTC the day before', () => {
    const window = sarWindow('2026-07-01', '2026-07-01', now);
    expect(iso(window.from)).toBe('2026-06-30T23:00:00.000Z');
    expect(iso(window.to)).toBe('2026-07-01T23:00:00.000Z');
  });

  it('the days the clocks change are 23 and 25 hours long', () => {
    // 2026-03-29: clocks go forward at 01:00 UTC; 2026-10-25: back at 01:00 UTC.
    const spring = sarWindow('2026-03-29', '2026-03-29', now);
    expect(iso(spring.from)).toBe('2026-03-29T00:00:00.000Z');
    expect(iso(spring.to)).toBe('2026-03-29T23:00:00.000Z');
    const autumn = sarWindow('2026-10-25', '2026-10-25', now);
    expect(iso(autumn.from)).toBe('2026-10-24T23:00:00.000Z');
    expect(iso(autumn.to)).toBe('2026-10-26T00:00:00.000Z');
  });

  it('an absent fromDate is the start of the trail; an absent toDate is today in London', () => {
    const window = sarWindow(undefined, undefined, now);
    expect(window.from).toBeUndefined();
    expect(iso(window.to)).toBe('2026-11-29T00:00:00.000Z');
    // 23:30 UTC on 30 June is already 1 July in London: today is 1 July.
    const summerNight = sarWindow(undefined, undefined, new Date('2026-06-30T23:30:00Z'));
    expect(iso(summerNight.to)).toBe('2026-07-01T23:00:00.000Z');
  });

  it('one day: fromDate equal to toDate', () => {
    const window = sarWindow('2026-11-28', '2026-11-28', now);
    expect(iso(window.from)).toBe('2026-11-28T00:00:00.000Z');
    expect(iso(window.to)).toBe('2026-11-29T00:00:00.000Z');
  });

  it.each([
    ['fromDate', '2026-02-30', undefined],
    ['fromDate', '26-01-01', undefined],
    ['fromDate', '2026-1-01', undefined],
    ['fromDate', '2026-01-01T00:00:00Z', undefined],
    ['toDate', undefined, '2026-13-01'],
    ['toDate', undefined, ''],
    ['toDate', undefined, '2026-11-28 '],
  ])('refuses %s given as %j / %j, naming it', (parameter, from, to) => {
    let thrown: unknown;
    try {
      sarWindow(from, to, now);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidSubjectAccessRequestError);
    expect((thrown as InvalidSubjectAccessRequestError).parameter).toBe(parameter);
    expect((thrown as Error).message).toContain(parameter);
  });

  it('refuses fromDate after toDate', () => {
    expect(() => sarWindow('2026-11-29', '2026-11-28', now)).toThrow(/fromDate is after toDate/);
    expect(() => sarWindow('2026-11-29', undefined, now)).toThrow(InvalidSubjectAccessRequestError);
  });
});
