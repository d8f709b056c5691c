import type { RouteHandler } from '@hono/zod-openapi';
import { AccessDeniedError } from '../../domain/errors.js';
import { type IssueQueueTokenDeps, issueQueueToken } from '../../domain/queue/credentials.js';
import type { AppEnv } from './env.js';
import { respondJson } from './respond.js';
import type { TokenRoutes } from './token.routes.js';

/** Hands the admitted caller to the use case and returns the credentials as STS names them. */
export function tokenHandlers(deps: IssueQueueTokenDeps) {
  const handler: RouteHandler<TokenRoutes['issueQueueToken'], AppEnv> = async (c) => {
    const caller = c.get('caller');
    if (caller === undefined) throw new AccessDeniedError('unknown-client');
    const deadline = c.get('deadline');
    deadline.engine = 'credentials';
    const credentials = await issueQueueToken(deps, caller, c.get('requestId'), deadline);
    return respondJson(c, 200, {
      AccessKeyId: credentials.accessKeyId,
      SecretAccessKey: credentials.secretAccessKey,
      SessionToken: credentials.sessionToken,
      Expiration: credentials.expiration.toISOString(),
    });
  };
  return { issueQueueToken: handler };
}
