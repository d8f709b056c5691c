import type { RouteHandler } from '@hono/zod-openapi';
import { getRiskScores } from '../../domain/use-cases/get-risk-scores.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { answered, readerOf } from './case-reader.js';
import type { AppEnv } from './env.js';
import { respondJson } from './respond.js';
import type { RiskRoutes } from './risk.routes.js';

export function riskHandlers({ repository }: { repository: CaseRepository }) {
  const handler: RouteHandler<RiskRoutes['getRiskScores'], AppEnv> = async (c) => {
    const { crn } = c.req.valid('param');
    const { page, perPage } = c.req.valid('query');
    return respondJson(
      c,
      200,
      answered(c, await getRiskScores({ repository }, crn, { page, perPage }, readerOf(c))),
    );
  };
  return { getRiskScores: handler };
}
