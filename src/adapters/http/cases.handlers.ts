import type { RouteHandler } from '@hono/zod-openapi';
import type { CrnFormat } from '../../domain/crn.js';
import { getCase, getCaseText } from '../../domain/use-cases/get-case.js';
import { getCommunityManagerByCrn } from '../../domain/use-cases/get-community-manager.js';
import { getHomeOfficeInterest } from '../../domain/use-cases/get-home-office-interest.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import type { CaseRoutes } from './cases.routes.js';
import { crnParam } from './crn-param.js';
import type { AppEnv } from './env.js';
import { respond, respondJson } from './respond.js';

export interface CaseHandlerDeps {
  readonly repository: CaseRepository;
  readonly crnFormat: CrnFormat;
}

type Handler<K extends keyof CaseRoutes> = RouteHandler<CaseRoutes[K], AppEnv>;

/**
 * Each handler turns the validated request into a use-case call and the result into JSON.
 * Domain errors propagate to the app's error handler, which maps them to problem+json.
 */
export function caseHandlers({ repository, crnFormat }: CaseHandlerDeps) {
  const crnOf = (c: Parameters<typeof crnParam>[0], raw: string) => crnParam(c, raw, crnFormat);
  const findText = repository.findPersonalDetailsText?.bind(repository);
  const textDeps = findText ? { repository: { findPersonalDetailsText: findText } } : undefined;
  const getCaseHandler: Handler<'getCase'> = async (c) => {
    const crn = crnOf(c, c.req.valid('param').crn);
    if (textDeps) {
      // The stored document is sent as it is: no parse and re-serialise on the request path.
      // The route's response type is the document; this body is that document as text (the
      // contract suite checks it parses to exactly what findPersonalDetails returns).
      const text = await getCaseText(textDeps, crn);
      return respond(c, 200, text, 'application/json') as never;
    }
    return respondJson(c, 200, await getCase({ repository }, crn)) as never;
  };
  const getHomeOfficeInterestHandler: Handler<'getHomeOfficeInterest'> = async (c) => {
    const interest = await getHomeOfficeInterest({ repository }, crnOf(c, c.req.valid('param').crn));
    return respondJson(c, 200, interest) as never;
  };
  const getCommunityManagerHandler: Handler<'getCommunityManagerByCrn'> = async (c) => {
    const manager = await getCommunityManagerByCrn({ repository }, crnOf(c, c.req.valid('param').crn));
    return respondJson(c, 200, manager) as never;
  };
  return {
    getCase: getCaseHandler,
    getHomeOfficeInterest: getHomeOfficeInterestHandler,
    getCommunityManagerByCrn: getCommunityManagerHandler,
  };
}
