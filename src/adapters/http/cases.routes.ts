import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { Permission } from '../../domain/access/permissions.js';
import type { CrnFormat } from '../../domain/crn.js';
import type { AppEnv } from './env.js';
import { caseReadFailures, problem } from './route-responses.js';
import {
  CommunityOffenderManagerSchema,
  crnParamsSchema,
  HomeOfficeInterestSchema,
  PersonalDetailsAndCircumstancesSchema,
} from './schemas.js';

/** The security requirement of the three case reads: client certificate, API key and bearer JWT, together. */
export const CASE_READ_SECURITY = [{ mutualTLS: [], apiKey: [], bearerAuth: [] }];

const errorResponses = {
  400: problem('The crn does not match the configured pattern'),
  401: problem('Bearer token missing or invalid'),
  ...caseReadFailures,
} as const;

/** Middleware that admits a caller to one operation (steps 6–8), or none in tests of the core. */
export type OperationGuard = (permission: Permission) => MiddlewareHandler<AppEnv>[];

/**
 * The three case routes, their crn parameter built from the configured pattern. The guard's
 * middleware runs before the request is validated.
 */
export function caseRoutes(format: CrnFormat, guard: OperationGuard = () => []) {
  const params = crnParamsSchema(format);
  return {
    getCase: createRoute({
      method: 'get',
      path: '/case/{crn}',
      operationId: 'getCase',
      middleware: guard('getCase'),
      tags: ['Case'],
      summary: 'Personal details and circumstances',
      description:
        'Preferred language, personal circumstances, disabilities and personality disorder status of the person.',
      security: CASE_READ_SECURITY,
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
      method: 'get',
      path: '/case/{crn}/home-office-interest',
      operationId: 'getHomeOfficeInterest',
      middleware: guard('getHomeOfficeInterest'),
      tags: ['Case'],
      summary: 'Home Office interest',
      description: 'Whether a Home Office interest exists, with optional notes.',
      security: CASE_READ_SECURITY,
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
      method: 'get',
      path: '/case/{crn}/community-manager',
      operationId: 'getCommunityManagerByCrn',
      middleware: guard('getCommunityManagerByCrn'),
      tags: ['Case'],
      summary: 'Community manager',
      description:
        'The case reference and the community manager responsible for the case. 404 when the case has no active community manager.',
      security: CASE_READ_SECURITY,
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
