import { z } from '@hono/zod-openapi';
import { CRN_MAX_LENGTH, Crn, type CrnFormat } from '../../domain/crn.js';
import { SCORE_LEVELS } from '../../domain/types.js';
import { ProblemType } from './problem.js';

/**
 * The resources of the interface specification as zod schemas: the single source of both
 * response validation in tests and the OpenAPI document. The service always sends every
 * field (null when unknown or withheld, [] when empty), so the document marks every field
 * required, nullable where the specification's tables allow null: a generated client gets
 * `preferredLanguage: CodeAndDescription | null`, not `preferredLanguage?: …`. What a
 * system of record may send is read by the upstream adapter's own tolerant schemas
 * (`adapters/upstream/reading.ts`), never by these.
 */

/**
 * Always sent, may be null. Written as a union with null rather than `.nullable()`: the
 * generator drops `.nullable()` on a schema registered as a component (a `$ref`), while a
 * union keeps it as `anyOf: [{ $ref }, { type: 'null' }]`.
 */
const nullable = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

export const CodeAndDescriptionSchema = z
  .object({
    code: z.string().openapi({ example: 'ENG' }),
    description: z.string().openapi({ example: 'English' }),
  })
  .openapi('CodeAndDescription');

const dateTime = z.iso
  .datetime({ offset: true })
  .openapi({ description: 'ISO 8601 date and time with offset', example: '2024-03-01T10:15:00+00:00' });

export const PersonCircumstanceSchema = z
  .object({ type: CodeAndDescriptionSchema, subType: CodeAndDescriptionSchema, updatedAt: dateTime })
  .openapi('PersonCircumstance');

export const DisabilitySchema = z
  .object({ type: CodeAndDescriptionSchema, updatedAt: dateTime })
  .openapi('Disability');

export const OffenderPersonalityDisorderSchema = z
  .object({ status: CodeAndDescriptionSchema })
  .openapi('OffenderPersonalityDisorder');

export const PersonalDetailsAndCircumstancesSchema = z
  .object({
    preferredLanguage: nullable(CodeAndDescriptionSchema),
    personalCircumstances: nullable(z.array(PersonCircumstanceSchema)),
    disabilities: nullable(z.array(DisabilitySchema)),
    offenderPersonalityDisorder: nullable(OffenderPersonalityDisorderSchema),
  })
  .openapi('PersonalDetailsAndCircumstances');

export const HomeOfficeInterestSchema = z
  .object({ exists: z.boolean(), notes: nullable(z.string()) })
  .openapi('HomeOfficeInterest');

export const NameSchema = z
  .object({ forename: z.string(), middleName: nullable(z.string()), surname: z.string() })
  .openapi('Name');

export const CommunityManagerSchema = z
  .object({
    name: NameSchema,
    pdu: z.string().openapi({ description: 'Probation delivery unit name' }),
    jobRole: nullable(z.string()),
    emailAddress: nullable(z.string()),
    officeName: nullable(z.string()),
    teamPhoneNumber: nullable(z.string()),
  })
  .openapi('CommunityManager');

export const CommunityOffenderManagerSchema = z
  .object({ crn: z.string(), communityManager: CommunityManagerSchema })
  .openapi('CommunityOffenderManager');

const ScoreLevelSchema = z.enum(SCORE_LEVELS).nullable().openapi('ScoreLevel');
const LevelledScoreSchema = z
  .object({ scoreLevel: ScoreLevelSchema, score: z.number().nullable() })
  .openapi('LevelledScore');

export const RiskPredictorScoreSchema = z
  .object({
    completedDate: z.iso
      .datetime({ offset: true })
      .openapi({ description: 'When the assessment was completed (ISO 8601)' }),
    assessmentStatus: z.string().openapi({ example: 'COMPLETE' }),
    generalPredictor: LevelledScoreSchema,
    violencePredictor: LevelledScoreSchema,
    groupReconviction: LevelledScoreSchema,
    riskOfSeriousRecidivism: LevelledScoreSchema,
    sexualPredictor: z
      .object({
        indecentScoreLevel: ScoreLevelSchema,
        contactScoreLevel: ScoreLevelSchema,
        indecentScore: z.number().nullable(),
        contactScore: z.number().nullable(),
      })
      .openapi('SexualPredictor'),
  })
  .openapi('RiskPredictorScore');

export const RiskScoresPageSchema = z
  .object({
    data: z.array(RiskPredictorScoreSchema),
    pagination: z
      .object({
        isLastPage: z.boolean(),
        count: z.number().int().openapi({ description: 'Items on this page' }),
        page: z.number().int(),
        perPage: z.number().int(),
        totalCount: z.number().int(),
        totalPages: z.number().int(),
      })
      .openapi('Pagination'),
  })
  .openapi('RiskPredictorScores');

export const ProblemSchema = z
  .object({
    type: z
      .string()
      .openapi({ description: 'A URI naming the kind of problem', example: ProblemType.caseNotFound }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().openapi({ description: 'The request path' }),
    requestId: z.string().openapi({ description: 'Also sent as X-Request-Id; quote it to the operator' }),
  })
  .openapi('Problem', { description: 'RFC 9457 problem details' });

/**
 * The `crn` path parameter: parsed once, by the domain's `Crn.parse`, into a `Crn` that the
 * handler hands on as it is. The document states the same rule (pattern and length) for
 * consumers; the schema does not check it a second time.
 */
/** A crn of the configured pattern, read into a `Crn` (a 400 naming the pattern otherwise). */
export function crnSchema(format: CrnFormat) {
  const message = `must match the pattern ${format.pattern}`;
  return z.string().transform((raw, ctx) => {
    try {
      return Crn.parse(raw, format);
    } catch {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
  });
}

export function crnParamsSchema(format: CrnFormat) {
  return z.object({
    crn: crnSchema(format).openapi({
      param: { name: 'crn', in: 'path', required: true },
      type: 'string',
      minLength: 1,
      maxLength: CRN_MAX_LENGTH,
      pattern: format.pattern,
      description: 'Case reference number',
      example: 'X123456',
    }),
  });
}
