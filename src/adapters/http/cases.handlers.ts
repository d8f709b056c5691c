import type { RouteHandler } from '@hono/zod-openapi';
import { withholdsPersonalDetails } from '../../domain/access/redaction.js';
import { getCase, getCaseText } from '../../domain/use-cases/get-case.js';
import { getCommunityManagerByCrn } from '../../domain/use-cases/get-community-manager.js';
import { getHomeOfficeInterest } from '../../domain/use-cases/get-home-office-interest.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { answered, readerOf } from './case-reader.js';
import type { CaseRoutes } from './cases.routes.js';
import type { AppEnv } from './env.js';
import { respondJson, respondJsonText } from './respond.js';

export interface CaseHandlerDeps {
  readonly repository: CaseRepository;
}

type Handler<K extends keyof CaseRoutes> = RouteHandler<CaseRoutes[K], AppEnv>;

/**
 * Each handler turns the validated request (its `crn` already a domain `Crn`, parsed by the
 * route's schema) and the admitted caller into a use-case call, and the answer into JSON.
 * The return types are checked against each route's declared responses. Domain errors
 * (not found, limited access, …) propagate to the app's error handler, which maps them to
 * problem+json.
 */
export function caseHandlers({ repository }: CaseHandlerDeps) {
  const findText = repository.findPersonalDetailsText?.bind(repository);
  const textDeps = findText ? { repository: { findPersonalDetailsText: findText } } : undefined;
  const getCaseHandler: Handler<'getCase'> = async (c) => {
    const { crn } = c.req.valid('param');
    const reader = readerOf(c);
    // The stored document is sent as it is: no parse and re-serialise on the request path
    // (the contract suite checks it parses to exactly what findPersonalDetails returns).
    // Text withholds nothing, so a client with fields withheld gets the minimised object.
    if (textDeps && !withholdsPersonalDetails(reader.withheld)) {
      return respondJsonText(c, 200, answered(c, await getCaseText(textDeps, crn, reader)));
    }
    return respondJson(c, 200, answered(c, await getCase({ repository }, crn, reader)));
  };
  const getHomeOfficeInterestHandler: Handler<'getHomeOfficeInterest'> = async (c) =>
    respondJson(
      c,
      200,
      answered(c, await getHomeOfficeInterest({ repository }, c.req.valid('param').crn, readerOf(c))),
    );
  const getCommunityManagerHandler: Handler<'getCommunityManagerByCrn'> = async (c) =>
    respondJson(
      c,
      200,
      answered(c, await getCommunityManagerByCrn({ repository }, c.req.valid('param').crn, readerOf(c))),
    );
  return {
    getCase: getCaseHandler,
    getHomeOfficeInterest: getHomeOfficeInterestHandler,
    getCommunityManagerByCrn: getCommunityManagerHandler,
  };
}
