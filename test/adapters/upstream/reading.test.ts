import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { mismatchOf, notTheCase, upstreamReading } from '../../../src/adapters/upstream/reading.js';
import { recordedBody } from '../../support/real-upstream.js';

const reading = upstreamReading('Europe/London');
const scores = recordedBody('gateway-risk-scores') as { data: Record<string, unknown>[] };

/** The recorded risk-score page with one field of its first score replaced. */
function scoresWith(change: (score: Record<string, unknown>) => void): unknown {
  const page = structuredClone(scores);
  change(page.data[0] as Record<string, unknown>);
  return page;
}

function mismatch(schema: z.ZodType, body: unknown) {
  const read = schema.safeParse(body);
  if (read.success) throw new Error('expected the body not to fit');
  return mismatchOf(read.error);
}

describe('reading what an upstream sends: what still does not fit is named by field and reason, never by value', () => {
  it.each([
    [
      'a level outside the enum',
      scoresWith((s) => {
        s.generalPredictor = { scoreLevel: 'EXTREME-7731' };
      }),
      'data[0].generalPredictor.scoreLevel',
      'expected one of LOW, MEDIUM, HIGH, VERY_HIGH, NOT_APPLICABLE',
    ],
    [
      'a date that is not a date',
      scoresWith((s) => {
        s.completedDate = 'Tuesday-7731';
      }),
      'data[0].completedDate',
      'not an ISO 8601 datetime',
    ],
    [
      'a day that is not on the calendar',
      scoresWith((s) => {
        s.completedDate = '2026-02-30T10:00:00';
      }),
      'data[0].completedDate',
      'not an ISO 8601 datetime',
    ],
    [
      'a score that is text',
      scoresWith((s) => {
        s.violencePredictor = { scoreLevel: 'LOW', score: '7731' };
      }),
      'data[0].violencePredictor.score',
      'expected number',
    ],
    ['no pagination', { data: [] }, 'pagination', 'expected object'],
    [
      'a list that is not a list',
      { data: 'none-7731', pagination: { isLastPage: true } },
      'data',
      'expected array',
    ],
    ['a body that is not an object', '7731', '(body)', 'expected object'],
  ])('risk scores: %s', (_what, body, field, reason) => {
    const found = mismatch(reading.riskScoresPage.schema, body);
    expect(found).toStrictEqual({ field, reason });
    expect(JSON.stringify(found)).not.toContain('7731');
  });

  it('the other resources: a required field absent, or of the wrong type', () => {
    expect(mismatch(reading.homeOfficeInterest.schema, { crn: 'R000001' })).toStrictEqual({
      field: 'exists',
      reason: 'expected boolean',
    });
    expect(
      mismatch(reading.communityManager.schema, {
        crn: 'R000001',
        communityManager: { name: { forename: 'A' }, pdu: 'P' },
      }),
    ).toStrictEqual({
      field: 'communityManager.name.surname',
      reason: 'expected string',
    });
    expect(
      mismatch(reading.personalDetails.schema, {
        disabilities: [{ type: { code: 'D', description: 'd' }, updatedAt: '2025-13-01T00:00:00' }],
      }),
    ).toStrictEqual({ field: 'disabilities[0].updatedAt', reason: 'not an ISO 8601 datetime' });
  });

  it('an offset that is sent is kept as sent; unknown fields are dropped at every level', () => {
    const read = reading.riskScoresPage.schema.parse(
      scoresWith((s) => {
        s.completedDate = '2025-07-01T10:00:00.5-03:30';
        s.generalPredictor = { scoreLevel: 'LOW', score: 3.5, band: 'x' };
      }),
    );
    expect(read.data[0]?.completedDate).toBe('2025-07-01T10:00:00.5-03:30');
    expect(read.data[0]?.generalPredictor).toStrictEqual({ scoreLevel: 'LOW', score: 3.5 });
    expect(Object.keys(read)).toEqual(['data', 'isLastPage']);
  });

  it('an empty body is nothing held: every field null, every list []', () => {
    expect(reading.personalDetails.schema.parse({})).toStrictEqual({
      preferredLanguage: null,
      personalCircumstances: [],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
    expect(reading.riskScoresPage.schema.parse({ pagination: { isLastPage: true } })).toStrictEqual({
      data: [],
      isLastPage: true,
    });
  });
});

describe('an answer checked to be the case asked for, before it is read (decisions §17, §20)', () => {
  const { personalDetails, homeOfficeInterest, communityManager, riskScoresPage } = reading;
  it('knows each resource by its fields, crn among them', () => {
    expect([...personalDetails.fields].sort()).toEqual([
      'crn',
      'disabilities',
      'offenderPersonalityDisorder',
      'personalCircumstances',
      'preferredLanguage',
    ]);
    expect([...homeOfficeInterest.fields].sort()).toEqual(['crn', 'exists', 'notes']);
    expect([...communityManager.fields].sort()).toEqual(['communityManager', 'crn']);
    expect([...riskScoresPage.fields].sort()).toEqual(['crn', 'data', 'pagination']);
  });

  // A crn field that is there must be the crn asked for: null is not it, nor a number, nor the
  // crn in another case (crns compare exactly), whatever else the answer holds.
  const NOT_THE_CRN = [
    ['null, with a health page', { crn: null, status: 'UP' }],
    ['null, with the resource’s own fields', { crn: null, exists: true, disabilities: [], data: [] }],
    ['a number', { crn: 123 }],
    ['another crn', { crn: 'OTHER1' }],
    ['the crn in lower case', { crn: 'x123456' }],
    ['the crn with a space', { crn: 'X123456 ' }],
    ['a list holding the crn', { crn: ['X123456'] }],
  ] as const;
  describe.each([
    ['the case', personalDetails],
    ['home-office interest', homeOfficeInterest],
    ['community manager', communityManager],
    ['a page of risk scores', riskScoresPage],
  ] as const)('%s', (_resource, resource) => {
    it.each(NOT_THE_CRN)('a crn that is %s: crn-mismatch', (_what, body) => {
      expect(notTheCase(body, 'X123456', resource.fields)).toBe('crn-mismatch');
    });
    it('the crn asked for: read on', () => {
      expect(notTheCase({ crn: 'X123456' }, 'X123456', resource.fields)).toBeUndefined();
    });
  });

  it.each([
    ['another crn', { crn: 'Y654321', disabilities: [] }, 'crn-mismatch'],
    ['a crn in another case', { crn: 'x123456' }, 'crn-mismatch'],
    ['a crn that is no string', { crn: 123456 }, 'crn-mismatch'],
    ['a health page', { status: 'UP' }, 'unrecognised-answer'],
    [
      'an error body',
      { error: 'Not Found', message: 'No static resource', path: '/case' },
      'unrecognised-answer',
    ],
    ['{}', {}, undefined],
    ['its own crn alone', { crn: 'X123456' }, undefined],
    ['a crn of null: not the crn asked for', { crn: null }, 'crn-mismatch'],
    ['its own crn and fields unknown here', { crn: 'X123456', riskFlags: [] }, undefined],
    ['one field of the case among others', { disabilities: [], status: 'UP' }, undefined],
    ['not an object (the schema refuses it)', [1, 2], undefined],
  ])('%s: %s', (_what, body, expected) => {
    expect(notTheCase(body, 'X123456', personalDetails.fields)).toBe(expected);
  });
});
