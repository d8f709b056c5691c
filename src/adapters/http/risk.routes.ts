import { createRoute, z } from '@hono/zod-openapi';
import type { CrnFormat } from '../../domain/crn.js';
import { MAX_PER_PAGE } from '../../domain/use-cases/get-risk-scores.js';
import { caseOperationRoute, type OperationGuard } from './cases.routes.js';
import { caseReadFailures, problem } from './route-responses.js';
import { crnParamsSchema, RiskScoresPageSchema } from './schemas.js';

/**
 * A page number or size: digits only (no sign, no exponent), read as a number once here.
 * The document says what it is, an integer in its range (the use case checks the range and
 * answers 400 outside it), so a generated client types it as a number, not a string.
 */
const wholeNumber = (name: string, description: string, fallback: number, maximum?: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, { error: 'must be a whole number' })
    .default(String(fallback))
    .transform(Number)
    .openapi({
      param: { name, in: 'query', required: false, description },
      type: 'integer',
      minimum: 1,
      ...(maximum === undefined ? {} : { maximum }),
      default: fallback,
      example: fallback,
    });

/** The gateway's versioned path for risk predictor scores (decisions §4). */
export function riskRoutes(format: CrnFormat, guard: OperationGuard) {
  return {
    getRiskScores: createRoute({
      ...caseOperationRoute('getRiskScores', guard),
      tags: ['Risk'],
      summary: 'Risk predictor scores',
      description: `Risk predictor scores, newest completedDate first, a page at a time (perPage at most ${MAX_PER_PAGE}).`,
      request: {
        params: crnParamsSchema(format),
        query: z.object({
          page: wholeNumber('page', 'The page wanted, from 1 (the newest scores)', 1),
          perPage: wholeNumber('perPage', `Scores a page, 1 to ${MAX_PER_PAGE}`, 10, MAX_PER_PAGE),
        }),
      },
      responses: {
        200: {
          description: 'One page of risk predictor scores',
          content: { 'application/json': { schema: RiskScoresPageSchema } },
        },
        400: problem('The crn or the pagination is not valid'),
        ...caseReadFailures,
      },
    }),
  };
}
export type RiskRoutes = ReturnType<typeof riskRoutes>;
