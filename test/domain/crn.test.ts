import { describe, expect, it } from 'vitest';
import { CRN_MAX_LENGTH, Crn, CrnFormat, DEFAULT_CRN_PATTERN } from '../../src/domain/crn.js';
import { InvalidCrnError } from '../../src/domain/errors.js';

describe('Crn', () => {
  it('accepts the default shape: one capital letter and six digits', () => {
    expect(Crn.parse('X123456').value).toBe('X123456');
    expect(Crn.parse('A000000').toString()).toBe('A000000');
    expect(JSON.stringify({ crn: Crn.parse('Z999999') })).toBe('{"crn":"Z999999"}');
  });

  it.each([
    ['', 'it is empty'],
    ['x123456', 'does not match'],
    ['X12345', 'does not match'],
    ['X1234567', 'does not match'],
    ['XX23456', 'does not match'],
    ['X123456 ', 'does not match'],
    [' X123456', 'does not match'],
    ['X123456\n', 'does not match'],
    ['../etc', 'does not match'],
    ['Ｘ123456', 'does not match'],
    ['X１２３４５６', 'does not match'],
    ['X'.repeat(10_000), `longer than ${CRN_MAX_LENGTH}`],
  ])('rejects %j with a reason (%s)', (raw, reason) => {
    expect(() => Crn.parse(raw)).toThrow(InvalidCrnError);
    expect(() => Crn.parse(raw)).toThrow(reason);
  });

  it('carries the stable code INVALID_CRN', () => {
    try {
      Crn.parse('nope');
      expect.unreachable();
    } catch (error) {
      expect((error as InvalidCrnError).code).toBe('INVALID_CRN');
    }
  });

  it('compares by value', () => {
    expect(Crn.parse('X123456').equals(Crn.parse('X123456'))).toBe(true);
    expect(Crn.parse('X123456').equals(Crn.parse('X123457'))).toBe(false);
  });
});

describe('CrnFormat', () => {
  it('defaults to ^[A-Z][0-9]{6}$', () => {
    expect(CrnFormat.default.pattern).toBe(DEFAULT_CRN_PATTERN);
    expect(DEFAULT_CRN_PATTERN).toBe('^[A-Z][0-9]{6}$');
  });

  it('takes a configured pattern and validates against it', () => {
    const format = CrnFormat.of('^[A-Z]{2}[0-9]{4}$');
    expect(Crn.parse('AB1234', format).value).toBe('AB1234');
    expect(() => Crn.parse('X123456', format)).toThrow(/does not match the pattern \^\[A-Z\]\{2\}/);
    expect(format.accepts('AB1234')).toBe(true);
    expect(format.accepts('A1234')).toBe(false);
  });

  it.each([
    ['[A-Z][0-9]{6}', /anchored/],
    ['^[A-Z][0-9]{6}', /anchored/],
    ['^([A-Z]$', /not a valid regular expression/],
    ['^.*$', /empty string/],
  ])('refuses the pattern %j', (pattern, message) => {
    expect(() => CrnFormat.of(pattern)).toThrow(message);
  });

  it('matches a pattern with alternatives against the whole crn, not a prefix or suffix of it', () => {
    // Found by test/property/crn.property.test.ts: the middle alternative was unanchored.
    const format = CrnFormat.of('^[A-Z][0-9]{6}|[a-z]+|X[0-9]{3}$');
    expect(format.accepts('Az')).toBe(false);
    expect(format.accepts('../x123456')).toBe(false);
    expect(format.accepts('X123456/../Y')).toBe(false);
    expect(format.accepts('abc')).toBe(true);
    expect(format.accepts('X123456')).toBe(true);
    expect(format.accepts('X123')).toBe(true);
    // A pattern whose own groups do not balance is refused, not balanced by the wrapping.
    expect(() => CrnFormat.of('^a)|(b$')).toThrow(/not a valid regular expression/);
  });

  it('never runs the pattern on an over-long input', () => {
    // A pattern that would accept anything non-empty still cannot admit a huge value.
    const format = CrnFormat.of('^.+$');
    expect(format.problemWith('a'.repeat(CRN_MAX_LENGTH))).toBeUndefined();
    expect(format.problemWith('a'.repeat(CRN_MAX_LENGTH + 1))).toMatch(/longer than/);
  });
});
