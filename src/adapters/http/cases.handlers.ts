import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { type RedactableField, withholdsPersonalDetails } from '../../domain/access/redaction.js';
import { getCase, getCaseText } from '../../domain/use-cases/get-case.js';
import { getCommunityManagerByCrn } from '../../domain/use-cases/get-community-manager.js';
import { getHomeOfficeInterest } from '../../domain/use-cases/get-home-office-interest.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import type { CaseRoutes } from './cases.routes.js';
import type { AppEnv } from './env.js';
import { respondJson, respondJsonText } from './respond.js';

export interface CaseHandlerDeps {
  readonly repository: CaseRepository;
}

type Handler<K extends keyof CaseRoutes> = RouteHandler<CaseRoutes[K], AppEnv>;

/** The fields withheld from the admitted client (none where no perimeter admits callers, in tests of the core). */
const withheldFrom = (c: Context<AppEnv>): readonly RedactableField[] => c.get('caller')?.client.redact ?? [];

/**
 * Each handler turns the validated request (its `crn` already a domain `Crn`, parsed by the
 * route's schema) into a use-case call and the result into JSON. The return types are
 * checked against each route's declared responses. Domain errors propagate to the app's
 * error handler, which maps them to problem+json.
 */
export function caseHandlers({ repository }: CaseHandlerDeps) {
  const findText = repository.findPersonalDetailsText?.bind(repository);
  const textDeps = findText ? { repository: { findPersonalDetailsText: findText } } : undefined;
  const getCaseHandler: Handler<'getCase'> = async (c) => {
    const { crn } = c.req.valid('param');
    const withheld = withheldFrom(c);
    // The stored document is sent as it is: no parse and re-serialise on the request path
    // (the contract suite checks it parses to exactly what findPersonalDetails returns).
    // Text withholds nothing, so a client with fields withheld gets the minimised object.
    if (textDeps && !withholdsPersonalDetails(withheld)) {
      return respondJsonText(c, 200, await getCaseText(textDeps, crn));
    }
    return respondJson(c, 200, await getCase({ repository }, crn, withheld));
  };
  const getHomeOfficeInterestHandler: Handler<'getHomeOfficeInterest'> = async (c) =>
    respondJson(
      c,
      200,
      await getHomeOfficeInterest({ repository }, c.req.valid('param').crn, withheldFrom(c)),
    );
  const getCommunityManagerHandler: Handler<'getCommunityManagerByCrn'> = async (c) =>
    respondJson(
      c,
      200,
      await getCommunityManagerByCrn({ repository }, c.req.valid('param').crn, withheldFrom(c)),
    );
  return {
    getCase: getCaseHandler,
    getHomeOfficeInterest: getHomeOfficeInterestHandler,
    getCommunityManagerByCrn: getCommunityManagerHandler,
  };
}
