import type * as z from 'zod';
import { oneOf, optionalText } from '../../../adapters/shared/variables.js';
import { jwksSourceProblem } from '../../../domain/access/jwks-source.js';

/**
 * The bearer token variables: whether a token is required, and the key set, issuer and
 * audience it is checked against; and the rules between them.
 */

export const BEARER_VARIABLES = {
  BEARER_MODE: oneOf(['required', 'optional', 'off'], 'required'),
  BEARER_JWKS: optionalText(),
  BEARER_ISSUER: optionalText(),
  BEARER_AUDIENCE: optionalText(),
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
