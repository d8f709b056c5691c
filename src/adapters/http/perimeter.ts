import type { MiddlewareHandler } from 'hono';
import {
  admitClient,
  type BearerMode,
  checkBearer,
  checkOnBehalfOf,
  effectivePermissions,
  requirePermission,
} from '../../domain/access/admit.js';
import type { Caller } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import { AccessDeniedError, UnauthenticatedError } from '../../domain/errors.js';
import type { AccessReader, Clock, SecretHasher, TokenVerifier } from '../../domain/needs.js';
import type { AppEnv } from './env.js';
import type { IdentityReader } from './identity.js';

export interface PerimeterOptions {
  readonly identify: IdentityReader;
  readonly directory: AccessReader;
  readonly hasher: SecretHasher;
  readonly clock: Clock;
  readonly verifier: TokenVerifier;
  readonly bearerMode: BearerMode;
}

/** Tests of the core alone say so explicitly; there is no silent "no perimeter" default. */
export interface NoPerimeter {
  readonly disabled: true;
}

/**
 * Steps 2–4 of the pipeline, for every request: who is calling (certificate CN), with a live
 * API key of theirs, as a known, active client with an unrevoked certificate.
 */
export function admitRequests(options: PerimeterOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const certificate = options.identify(c.req.raw, c.env);
    if (certificate === undefined) throw new AccessDeniedError('unknown-client');
    c.set('certificate', certificate);
    const { client, key } = await admitClient(options, certificate, c.req.header('x-api-key'));
    c.set('admitted', { client, certificate, apiKeyId: key.id });
    await next();
  };
}

/** `Authorization: Bearer <token>`; `undefined` when absent. A header of another form is a 401. */
function bearerTokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(header);
  if (!match?.[1]) throw new UnauthenticatedError('bearer', 'the Authorization header is not a bearer token');
  return match[1];
}

/**
 * Steps 6–8 for one operation: the bearer token (when the operation carries that security
 * requirement), the on-behalf-of identity, and the permission. Runs before input validation
 * (step 9), so a caller without the permission learns nothing about the input rules.
 */
export function guardOperation(
  options: PerimeterOptions,
  permission: Permission,
  { bearer }: { bearer: boolean },
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const admitted = c.get('admitted');
    if (admitted === undefined) throw new AccessDeniedError('unknown-client');
    if (bearer) {
      await checkBearer(
        options,
        options.bearerMode,
        admitted.certificate,
        bearerTokenOf(c.req.header('authorization')),
      );
    }
    const onBehalfOf = await checkOnBehalfOf(options, admitted.client, c.req.header('x-on-behalf-of'));
    // Data returned to an on-behalf-of request is for that user alone. Set before the
    // handler runs (see app.ts: no header is set on a finished response).
    if (onBehalfOf !== null) c.header('Cache-Control', 'no-store, private');
    const caller: Caller = {
      ...admitted,
      onBehalfOf,
      permissions: await effectivePermissions(options, admitted.client, onBehalfOf),
    };
    c.set('caller', caller);
    requirePermission(caller, permission);
    await next();
  };
}
