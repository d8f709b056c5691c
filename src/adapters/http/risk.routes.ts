import { createRoute, z } from '@hono/zod-openapi';
import type { CrnFormat } from '../../domain/crn.js';
import { MAX_PER_PAGE } from '../../domain/use-cases/get-risk-scores.js';
import type { OperationGuard } from './cases.routes.js';
import { crnParamsSchema, ProblemSchema, RiskScoresPageSchema } from './schemas.js';

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** A page number or size: digits only (no sign, no exponent), read as a number once here. */
const wholeNumber = (name: string, fallback: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, { error: 'must be a whole number' })
    .default(String(fallback))
    .transform(Number)
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
