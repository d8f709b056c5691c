import * as z from 'zod';
import { jwksSourceProblem } from '../../../domain/access/jwks-source.js';

/**
 * The bearer token variables: whether a token is required, and the key set, issuer and
 * audience it is checked against; and the rules between them.
 */

export const BEARER_VARIABLES = {
  BEARER_MODE: z
    .enum(['required', 'optional', 'off'], { error: 'expected required, optional or off' })
    .default('required'),
  BEARER_JWKS: z.string().min(1).optional(),
  BEARER_ISSUER: z.string().min(1).optional(),
  BEARER_AUDIENCE: z.string().min(1).optional(),
};

type BearerVariables = z.output<z.ZodObject<typeof BEARER_VARIABLES>>;

/** Unless tokens are off, all three settings are needed, and the key set is one the service may fetch or read. */
export function bearerRules(env: BearerVariables, ctx: z.RefinementCtx): void {
  if (env.BEARER_MODE === 'off') return;
  for (const name of ['BEARER_JWKS', 'BEARER_ISSUER', 'BEARER_AUDIENCE'] as const) {
    if (env[name] === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `required unless BEARER_MODE=off (BEARER_MODE is ${env.BEARER_MODE})`,
      });
    }
  }
  const jwks = env.BEARER_JWKS === undefined ? undefined : jwksSourceProblem(env.BEARER_JWKS);
  if (jwks !== undefined) ctx.addIssue({ code: 'custom', path: ['BEARER_JWKS'], message: jwks });
}
