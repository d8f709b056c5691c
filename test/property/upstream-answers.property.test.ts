import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { limitedAccessRefusal, problemOf } from '../../src/adapters/upstream/problem-answers.js';
import {
  type CaseResource,
  mismatchOf,
  notTheCase,
  upstreamReading,
} from '../../src/adapters/upstream/reading.js';
import { GENERIC_RESTRICTION_MESSAGE } from '../../src/domain/access/limited-access.js';
import { SCORE_LEVELS } from '../../src/domain/types.js';
import { anyText } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * What the upstream system of record answers (src/adapters/upstream/reading.ts and
 * problem-answers.ts), read as the upstream case store reads it once the body is JSON: the
 * crn check, the tolerant reading schemas, the mismatch named for the log, and the problem
 * answers. The contract's JSON is written here from docs/consumers' shapes, not from the schemas.
 */

const CRN = 'X123456';
const reading = upstreamReading('Europe/London');
const resources = {
  personalDetails: reading.personalDetails,
  homeOfficeInterest: reading.homeOfficeInterest,
  communityManager: reading.communityManager,
  riskScoresPage: reading.riskScoresPage,
} as Record<string, CaseResource<unknown>>;
const resourceName = fc.constantFrom(...Object.keys(resources));

/** A string that says it came from the body, so a log line holding it is caught. */
const MARK = 'ǂsent';
const marked = fc.string({ maxLength: 12 }).map((s) => `${MARK}${s}`);
const anyJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    marked,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(
      fc.oneof(
        fc.constantFrom('crn', 'data', 'pagination', 'exists', 'notes', 'communityManager', 'name'),
        fc.string(),
      ),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

const iso = fc
  .record({
    date: fc.date({
      min: new Date('1990-01-01T00:00:00Z'),
      max: new Date('2090-12-31T23:59:59Z'),
      noInvalidDate: true,
    }),
    fraction: fc.boolean(),
    offset: fc.constantFrom('Z', '+00:00', '+01:00', '-05:00', '+05:30'),
  })
  .map(({ date, fraction, offset }) => {
    const text = date.toISOString();
    return `${fraction ? text.slice(0, 23) : text.slice(0, 19)}${offset}`;
  });
const text = fc.string({ maxLength: 20 });
const orNull = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const code = fc.record({ code: text, description: text });
const level = orNull(fc.constantFrom(...SCORE_LEVELS));
const score = orNull(fc.double({ noNaN: true, noDefaultInfinity: true }));

/** The domain values each resource reads into, and the JSON the contract sends for them. */
const values: Record<string, fc.Arbitrary<unknown>> = {
  personalDetails: fc.record({
    preferredLanguage: orNull(code),
    personalCircumstances: fc.array(fc.record({ type: code, subType: code, updatedAt: iso }), {
      maxLength: 2,
    }),
    disabilities: fc.array(fc.record({ type: code, updatedAt: iso }), { maxLength: 2 }),
    offenderPersonalityDisorder: orNull(fc.record({ status: code })),
  }),
  homeOfficeInterest: fc.record({ exists: fc.boolean(), notes: orNull(text) }),
  communityManager: fc.record({
    name: fc.record({ forename: text, middleName: orNull(text), surname: text }),
    pdu: text,
    jobRole: orNull(text),
    emailAddress: orNull(text),
    officeName: orNull(text),
    teamPhoneNumber: orNull(text),
  }),
  riskScoresPage: fc.record({
    data: fc.array(
      fc.record({
        completedDate: iso,
        assessmentStatus: text,
        generalPredictor: fc.record({ scoreLevel: level, score }),
        violencePredictor: fc.record({ scoreLevel: level, score }),
        groupReconviction: fc.record({ scoreLevel: level, score }),
        riskOfSeriousRecidivism: fc.record({ scoreLevel: level, score }),
        sexualPredictor: fc.record({
          indecentScoreLevel: level,
          contactScoreLevel: level,
          indecentScore: score,
          contactScore: score,
        }),
      }),
      { maxLength: 3 },
    ),
    isLastPage: fc.boolean(),
  }),
};

/** The contract's JSON of `value` for `resource`. */
function answerOf(resource: string, value: unknown): Record<string, unknown> {
  if (resource === 'communityManager') return { crn: CRN, communityManager: value };
  if (resource === 'riskScoresPage') {
    const { data, isLastPage } = value as { data: unknown[]; isLastPage: boolean };
    return { data, pagination: { isLastPage } };
  }
  return value as Record<string, unknown>;
}

/** `json` as the real services send it: null fields left out (where `drop`), unknown fields added (where `add`). */
function asSent(json: unknown, drop: boolean, add: boolean): unknown {
  if (Array.isArray(json)) return json.map((item) => asSent(item, drop, add));
  if (json === null || typeof json !== 'object') return json;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    if (drop && value === null) continue;
    out[key] = asSent(value, drop, add);
  }
  if (add) out.assessmentVersion = `${MARK}-unknown`;
  return out;
}

describe("the upstream's answers", () => {
  test.prop(
    [
      resourceName.chain((r) => fc.tuple(fc.constant(r), values[r] as fc.Arbitrary<unknown>)),
      fc.boolean(),
      fc.boolean(),
    ],
    runs(500),
  )(
    'an answer in the contract’s shape reads back as the values sent, null fields left out or unknown ones added alike',
    ([resource, value], drop, add) => {
      const { schema, fields } = resources[resource] as CaseResource<unknown>;
      const body = asSent(answerOf(resource, value), drop, add);
      expect(notTheCase(body, CRN, fields)).toBeUndefined();
      const read = schema.safeParse(body);
      expect(read.success && read.data).toEqual(value);
    },
    TIMEOUT,
  );

  test.prop([resourceName, anyJson], runs(1500))(
    'any JSON: judged and read without a throw; a refusal names a field and a reason, never a value sent',
    (resource, body) => {
      const { schema, fields } = resources[resource] as CaseResource<unknown>;
      const judged = notTheCase(body, CRN, fields);
      expect([undefined, 'crn-mismatch', 'unrecognised-answer']).toContain(judged);
      const read = schema.safeParse(body);
      if (read.success) return;
      const mismatch = mismatchOf(read.error);
      expect(mismatch.field).toMatch(/\S/);
      expect(JSON.stringify(mismatch)).not.toContain(MARK);
    },
    TIMEOUT,
  );

  test.prop(
    [resourceName, anyJson, fc.oneof(anyJson, fc.constantFrom(CRN, 'X123457', 'x123456', ` ${CRN}`, null))],
    runs(1500),
  )(
    'an answer naming a crn is ours only when the crn is the one asked for, exactly',
    (resource, body, crn) => {
      const answer = {
        ...(typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}),
        crn,
      };
      const judged = notTheCase(answer, CRN, (resources[resource] as CaseResource<unknown>).fields);
      if (crn !== CRN) expect(judged).toBe('crn-mismatch');
    },
    TIMEOUT,
  );

  test.prop(
    [
      fc.date({
        min: new Date('1990-01-01T00:00:00Z'),
        max: new Date('2090-12-31T23:59:59Z'),
        noInvalidDate: true,
      }),
    ],
    runs(500),
  )(
    'a local date-time (no offset) reads as that wall-clock time in the zone, with its offset (an hour on in the spring gap)',
    (date) => {
      const local = date.toISOString().slice(0, 19);
      // A date-time field of the contract: a disability's updatedAt.
      const read = resources.personalDetails?.schema.safeParse({
        disabilities: [{ type: { code: 'a', description: 'b' }, updatedAt: local }],
      });
      if (!read?.success) throw new Error('a local date-time is read');
      const shown = (read.data as { disabilities: { updatedAt: string }[] }).disabilities[0]?.updatedAt ?? '';
      expect(shown).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
      const wall = Date.parse(`${shown.slice(0, 19)}Z`) - Date.parse(`${local}Z`);
      expect([0, 3_600_000]).toContain(wall);
      // The instant it names shows that wall-clock time in London.
      const london = new Intl.DateTimeFormat('sv-SE', {
        timeZone: 'Europe/London',
        dateStyle: 'short',
        timeStyle: 'medium',
      }).format(new Date(Date.parse(shown)));
      expect(london.replace(' ', 'T')).toBe(shown.slice(0, 19));
    },
    TIMEOUT,
  );

  test.prop([anyText(600)], runs(1000))(
    'a problem answer of any text: its type and detail, or empty strings; a detail passed on holds no control character and is short',
    (body) => {
      const { type, detail } = problemOf(body);
      expect(typeof type).toBe('string');
      const refusal = limitedAccessRefusal(detail);
      if (refusal.message !== GENERIC_RESTRICTION_MESSAGE) {
        expect(refusal.message).toBe(detail);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be passed on
        expect(refusal.message).not.toMatch(/[\u0000-\u001f\u007f]/);
        expect(refusal.message.length).toBeLessThanOrEqual(500);
      }
    },
    TIMEOUT,
  );

  test.prop([fc.string({ maxLength: 600 })], runs(500))(
    'a problem+json answer’s detail, whatever it says, is passed on whole or not at all',
    (detail) => {
      const { detail: read } = problemOf(JSON.stringify({ type: 'urn:x', detail }));
      expect(read).toBe(detail);
      const message = limitedAccessRefusal(read).message;
      expect([detail, GENERIC_RESTRICTION_MESSAGE]).toContain(message);
    },
    TIMEOUT,
  );
});
