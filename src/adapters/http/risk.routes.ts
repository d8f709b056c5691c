import { createRoute, z } from '@hono/zod-openapi';
import type { CrnFormat } from '../../domain/crn.js';
import { SCORE_LEVELS } from '../../domain/types.js';
import { MAX_PER_PAGE } from '../../domain/use-cases/get-risk-scores.js';
import type { OperationGuard } from './cases.routes.js';
import { crnParamsSchema, ProblemSchema } from './schemas.js';

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

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

const wholeNumber = (name: string, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, { error: 'must be a whole number' })
    .default(String(fallback))
    .openapi({ param: { name, in: 'query', required: false }, example: String(fallback) });

/** The gateway's versioned path for risk predictor scores (decisions §4). */
export function riskRoutes(format: CrnFormat, guard: OperationGuard) {
  return {
    getRiskScores: createRoute({
      method: 'get',
      path: '/v1/persons/{crn}/risks/scores',
      operationId: 'getRiskScores',
      middleware: guard('getRiskScores'),
      tags: ['Risk'],
      summary: 'Risk predictor scores',
      description: `Risk predictor scores, newest completedDate first, a page at a time (perPage at most ${MAX_PER_PAGE}).`,
      security: [{ mutualTLS: [], apiKey: [] }],
      request: {
        params: crnParamsSchema(format),
        query: z.object({ page: wholeNumber('page', 1), perPage: wholeNumber('perPage', 10) }),
      },
      responses: {
        200: {
          description: 'One page of risk predictor scores',
          content: { 'application/json': { schema: RiskScoresPageSchema } },
        },
        400: problem('The crn or the pagination is not valid'),
        403: problem('API key missing or invalid, client not allowed, or permission not granted'),
        404: problem('No case is held for the crn'),
        429: problem('Rate limit exceeded'),
        500: problem('Unexpected error'),
        503: problem('Not ready, or the audit record could not be written'),
      },
    }),
  };
}
export type RiskRoutes = ReturnType<typeof riskRoutes>;
