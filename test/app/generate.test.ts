import { describe, expect, it } from 'vitest';
import { crnForIndex, generateCases, MAX_GENERATED_CASES } from '../../src/app/generate.js';
import { parseCaseFile } from '../../src/formats/case-file.js';

describe('generateCases', () => {
  it('is deterministic for a seed, and differs between seeds', () => {
    const a = [...generateCases(200, 7)];
    const b = [...generateCases(200, 7)];
    const c = [...generateCases(200, 8)];
    expect(a).toStrictEqual(b);
    expect(a).not.toStrictEqual(c);
    expect(a.map((r) => r.crn)).toStrictEqual(c.map((r) => r.crn));
  });

  it('makes valid cases: they pass the same strict parser as an imported file', () => {
    const cases = [...generateCases(2_000, 1)];
    expect(parseCaseFile({ cases })).toHaveLength(2_000);
  });

  it('covers the shapes: nulls, empty and full lists, managers and none', () => {
    const cases = [...generateCases(2_000, 1)];
    expect(cases.some((c) => c.communityManager === null)).toBe(true);
    expect(cases.some((c) => c.communityManager?.emailAddress !== null && c.communityManager !== null)).toBe(
      true,
    );
    expect(cases.some((c) => c.personalDetails.personalCircumstances.length === 0)).toBe(true);
    expect(cases.some((c) => c.personalDetails.personalCircumstances.length === 4)).toBe(true);
    expect(cases.some((c) => c.homeOfficeInterest.exists && c.homeOfficeInterest.notes === null)).toBe(true);
    expect(cases.some((c) => c.homeOfficeInterest.exists && c.homeOfficeInterest.notes !== null)).toBe(true);
  });

  it('numbers crns from A000000 through Z999999', () => {
    expect(crnForIndex(0)).toBe('A000000');
    expect(crnForIndex(999_999)).toBe('A999999');
    expect(crnForIndex(1_000_000)).toBe('B000000');
    expect(crnForIndex(MAX_GENERATED_CASES - 1)).toBe('Z999999');
    expect(() => crnForIndex(MAX_GENERATED_CASES)).toThrow(RangeError);
    expect(() => [...generateCases(-1, 1)]).toThrow(RangeError);
  });
});
