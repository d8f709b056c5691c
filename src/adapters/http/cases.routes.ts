import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Permission } from '../../domain/access/permissions.js';
import { type CaseRead, caseOperation } from '../../domain/case-operations.js';
import type { CrnFormat } from '../../domain/crn.js';
import type { AppEnv } from './env.js';
import { caseReadFailures, problem } from './route-responses.js';
import {
  CommunityOffenderManagerSchema,
  crnParamsSchema,
  HomeOfficeInterestSchema,
  PersonalDetailsAndCircumstancesSchema,
} from './schemas.js';

/** A case operation's security requirement, as its row says: client certificate and API key, and the bearer JWT where asked for. */
const WITH_BEARER = [{ mutualTLS: [], apiKey: [], bearerAuth: [] }];
const WITHOUT_BEARER = [{ mutualTLS: [], apiKey: [] }];

/** Middleware that admits a caller to one operation (steps 6–8), or none in tests of the core. */
export type OperationGuard = (permission: Permission) => MiddlewareHandler<AppEnv>[];

/**
 * What a case operation's route takes from its row of the table (case-operations.ts): its
 * method, path, operation id, the guard of its permission and its security requirement.
 */
export function caseOperationRoute<Id extends CaseRead>(id: Id, guard: OperationGuard) {
  const row = caseOperation(id);
  return {
    method: 'get',
    path: row.path,
    operationId: id,
    middleware: guard(id),
    security: row.bearer ? WITH_BEARER : WITHOUT_BEARER,
  } as const;
}

const errorResponses = {
  400: problem('The crn does not match the configured pattern'),
  401: problem('Bearer token missing or invalid'),
  ...caseReadFailures,
} as const;

/**
 * The three case routes, their crn parameter built from the configured pattern. The guard's
 * middleware runs before the request is validated.
 */
export function caseRoutes(format: CrnFormat, guard: OperationGuard = () => []) {
  const params = crnParamsSchema(format);
  return {
    getCase: createRoute({
      ...caseOperationRoute('getCase', guard),
      tags: ['Case'],
      summary: 'Personal details and circumstances',
      description:
        'Preferred language, personal circumstances, disabilities and personality disorder status of the person.',
      request: { params },
      responses: {
        200: {
          description: 'Personal details and circumstances',
          content: { 'application/json': { schema: PersonalDetailsAndCircumstancesSchema } },
        },
        ...errorResponses,
      },
    }),
    getHomeOfficeInterest: createRoute({
      ...caseOperationRoute('getHomeOfficeInterest', guard),
      tags: ['Case'],
      summary: 'Home Office interest',
      description: 'Whether a Home Office interest exists, with optional notes.',
      request: { params },
      responses: {
        200: {
          description: 'Home Office interest',
          content: { 'application/json': { schema: HomeOfficeInterestSchema } },
        },
        ...errorResponses,
      },
    }),
    getCommunityManagerByCrn: createRoute({
      ...caseOperationRoute('getCommunityManagerByCrn', guard),
      tags: ['Case'],
      summary: 'Community manager',
      description:
        'The case reference and the community manager responsible for the case. 404 when the case has no active community manager.',
      request: { params },
      responses: {
        200: {
          description: 'The community manager',
          content: { 'application/json': { schema: CommunityOffenderManagerSchema } },
        },
        ...errorResponses,
        404: problem('No case is held for the crn, or the case has no active community manager'),
      },
    }),
  };
}
export type CaseRoutes = ReturnType<typeof caseRoutes>;
