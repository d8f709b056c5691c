import * as z from 'zod';
import {
  type CommunityManager,
  type HomeOfficeInterest,
  type LevelledScore,
  type PersonalDetailsAndCircumstances,
  type RiskPredictorScore,
  SCORE_LEVELS,
  type SexualPredictor,
} from '../../domain/types.js';
import { localDateTimeReader } from './local-time.js';

/**
 * What this service reads from a system of record, per resource: tolerant where the real
 * services differ from this contract without changing its meaning, strict where a value
 * would be wrong. The service's own answers keep the contract's strict schemas
 * (`adapters/http/schemas.ts`); these are for reading only, and map straight to the domain.
 *
 * - An absent (or `null`) optional field is `null`; an absent list is `[]`. The probation
 *   service leaves null fields out of its JSON altogether.
 * - An absent score is `null`, its level kept: the public gateway withholds `score`,
 *   `indecentScore` and `contactScore`. An absent predictor is all `null`.
 * - A date-time without an offset (`2026-01-16T16:22:54`) is read in the zone given and
 *   answered with its offset; one with an offset is kept as sent.
 * - Fields this contract does not know (`assessmentVersion`, …) are dropped, never passed on.
 * - What still does not fit (a level outside the enum, a date that is not a date, a required
 *   field absent) fails, and `mismatchOf` names the field and the reason, never the value.
 */
export interface UpstreamReading {
  readonly personalDetails: CaseResource<PersonalDetailsAndCircumstances>;
  readonly homeOfficeInterest: CaseResource<HomeOfficeInterest>;
  /** The body of `/case/{crn}/community-manager`: its manager, under the crn it must name. */
  readonly communityManager: CaseResource<CommunityManager>;
  /** One page of risk scores, and whether it is the last. */
  readonly riskScoresPage: CaseResource<{ data: RiskPredictorScore[]; isLastPage: boolean }>;
}

/**
 * A resource of one case (`/case/{crn}…`, `/v1/persons/{crn}/risks/scores`): how its answer is
 * read, and the names of its fields, `crn` among them, by which an answer is known to be this
 * resource at all ({@link notTheCase}).
 */
export interface CaseResource<T> {
  readonly schema: z.ZodType<T>;
  readonly fields: ReadonlySet<string>;
}

/** A case resource read by `schema`, whose fields are `object`'s keys and `crn`. */
const caseResource = <T>(object: z.ZodObject, schema: z.ZodType<T>): CaseResource<T> => ({
  schema,
  fields: new Set(['crn', ...Object.keys(object.shape)]),
});

/** Why an answer is not the case resource asked for: the log's reason (never the body or a crn). */
export const NOT_THE_CASE = ['crn-mismatch', 'unrecognised-answer'] as const;
export type NotTheCase = (typeof NOT_THE_CASE)[number];

/**
 * Checked before an answer is read as `crn`'s resource (decisions §17, §20), since tolerant
 * reading alone would read anything as a case with nothing held:
 * - a `crn` field, where the answer has one, must be the crn asked for, character for
 *   character (crns compare exactly: `Crn.equals`); `null`, a number, or the crn in another
 *   case is not it. An upstream answering for another person (a cache or routing fault), or
 *   for nobody, is never served as ours;
 * - an answer that holds none of the resource's fields but holds others (`{"status":"UP"}`, a
 *   proxy's error body, a health page behind a misrouted base path) is not this resource.
 * `{}`, and the crn asked for alone with fields unknown here, stay a case with nothing held:
 * every field of the contract is optional, and the probation service leaves null fields out
 * (it leaves a null `crn` out too, so a `crn` that is there has a value to compare).
 */
export function notTheCase(body: unknown, crn: string, fields: ReadonlySet<string>): NotTheCase | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined; // the schema refuses it
  if (Object.hasOwn(body, 'crn') && (body as { crn: unknown }).crn !== crn) return 'crn-mismatch';
  const keys = Object.keys(body);
  if (keys.length > 0 && !keys.some((key) => fields.has(key))) return 'unrecognised-answer';
  return undefined;
}

/** Absent or null: null. */
const orNull = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? null);
/** Absent or null: []. */
const listOf = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v): z.output<T>[] => v ?? []);

const HAS_OFFSET = /(?:Z|[+-]\d{2}:\d{2})$/i;

/** The reading schemas for an upstream whose local date-times are in `timeZone` (IANA). */
export function upstreamReading(timeZone: string): UpstreamReading {
  const local = localDateTimeReader(timeZone);
  const dateTime = z.iso.datetime({ offset: true, local: true }).transform((text, ctx) => {
    if (HAS_OFFSET.test(text)) return text;
    const zoned = local(text);
    if (zoned === undefined) {
      ctx.addIssue({ code: 'custom', message: 'not a date-time on the calendar' });
      return z.NEVER;
    }
    return zoned;
  });

  const codeAndDescription = z.object({ code: z.string(), description: z.string() });
  const personalDetails = z.object({
    preferredLanguage: orNull(codeAndDescription),
    personalCircumstances: listOf(
      z.object({ type: codeAndDescription, subType: codeAndDescription, updatedAt: dateTime }),
    ),
    disabilities: listOf(z.object({ type: codeAndDescription, updatedAt: dateTime })),
    offenderPersonalityDisorder: orNull(z.object({ status: codeAndDescription })),
  }) satisfies z.ZodType<PersonalDetailsAndCircumstances>;

  const homeOfficeInterest = z.object({
    exists: z.boolean(),
    notes: orNull(z.string()),
  }) satisfies z.ZodType<HomeOfficeInterest>;

  const manager = z.object({
    name: z.object({ forename: z.string(), middleName: orNull(z.string()), surname: z.string() }),
    pdu: z.string(),
    jobRole: orNull(z.string()),
    emailAddress: orNull(z.string()),
    officeName: orNull(z.string()),
    teamPhoneNumber: orNull(z.string()),
  }) satisfies z.ZodType<CommunityManager>;
  // The contract requires the crn here: an answer without it is not known to be ours.
  const communityManagerAnswer = z.object({ crn: z.string(), communityManager: manager });
  const communityManager = communityManagerAnswer.transform(
    (body): CommunityManager => body.communityManager,
  );

  const level = orNull(z.enum(SCORE_LEVELS));
  const score = orNull(z.number());
  const levelled = z
    .object({ scoreLevel: level, score })
    .nullish()
    .transform((v): LevelledScore => v ?? { scoreLevel: null, score: null });
  const sexualPredictor = z
    .object({
      indecentScoreLevel: level,
      contactScoreLevel: level,
      indecentScore: score,
      contactScore: score,
    })
    .nullish()
    .transform(
      (v): SexualPredictor =>
        v ?? { indecentScoreLevel: null, contactScoreLevel: null, indecentScore: null, contactScore: null },
    );
  const riskScore = z.object({
    completedDate: dateTime,
    assessmentStatus: z.string(),
    generalPredictor: levelled,
    violencePredictor: levelled,
    groupReconviction: levelled,
    riskOfSeriousRecidivism: levelled,
    sexualPredictor,
  }) satisfies z.ZodType<RiskPredictorScore>;
  // Paging is followed by `isLastPage` alone: without it, where the list ends is unknown,
  // and answering a part of it as the whole would be a wrong answer.
  const riskScoresAnswer = z.object({
    data: listOf(riskScore),
    pagination: z.object({ isLastPage: z.boolean() }),
  });
  const riskScoresPage = riskScoresAnswer.transform((page) => ({
    data: page.data,
    isLastPage: page.pagination.isLastPage,
  }));

  return {
    personalDetails: caseResource(personalDetails, personalDetails),
    homeOfficeInterest: caseResource(homeOfficeInterest, homeOfficeInterest),
    communityManager: caseResource(communityManagerAnswer, communityManager),
    riskScoresPage: caseResource(riskScoresAnswer, riskScoresPage),
  };
}

/** Where a body did not fit, and why: for the operator's log, never holding the value sent. */
export interface Mismatch {
  /** `data[0].generalPredictor.scoreLevel`; `(body)` for the whole body. */
  readonly field: string;
  readonly reason: string;
}

/** The first problem of a failed read, as a field path and a reason built from the schema alone. */
export function mismatchOf(error: z.ZodError): Mismatch {
  const issue = error.issues[0];
  if (issue === undefined) return { field: '(body)', reason: 'does not fit' };
  const field =
    issue.path
      .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
      .join('') || '(body)';
  switch (issue.code) {
    case 'invalid_type':
      return { field, reason: `expected ${issue.expected}` };
    case 'invalid_value':
      return { field, reason: `expected one of ${issue.values.map(String).join(', ')}` };
    case 'invalid_format':
      return { field, reason: `not an ISO 8601 ${issue.format}` };
    case 'custom':
      // Only this module's own messages, which hold no value.
      return { field, reason: issue.message };
    default:
      return { field, reason: issue.code };
  }
}
