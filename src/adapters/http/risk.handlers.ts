import type { RouteHandler } from '@hono/zod-openapi';
import type { CrnFormat } from '../../domain/crn.js';
import { getRiskScores } from '../../domain/use-cases/get-risk-scores.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { crnParam } from './crn-param.js';
import type { AppEnv } from './env.js';
import { respondJson } from './respond.js';
import type { RiskRoutes } from './risk.routes.js';

export function riskHandlers({
  repository,
  crnFormat,
}: {
  repository: CaseRepository;
  crnFormat: CrnFormat;
}) {
  const handler: RouteHandler<RiskRoutes['getRiskScores'], AppEnv> = async (c) => {
    const crn = crnParam(c, c.req.valid('param').crn, crnFormat);
    const { page, perPage } = c.req.valid('query');
    const scores = await getRiskScores({ repository }, crn, { page: Number(page), perPage: Number(perPage) });
    return respondJson(c, 200, scores) as never;
  };
  return { getRiskScores: handler };
}
