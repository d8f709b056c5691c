import * as z from 'zod';
import { optionalText, wholeNumber } from '../../../adapters/shared/variables.js';
import { jwksSourceProblem } from '../../../domain/access/jwks-source.js';
import { optionalPort } from './listener.js';

/**
 * The SAR service's door (decisions §23): a listener of its own, `SAR_PORT`, for the
 * organisation's SAR service, which holds no client certificate and no API key and calls with
 * an OAuth2 client-credentials token. Its variables: the port, the key set, issuer and role the
 * token is checked against, the deadline of its requests; and the rules between them.
 */

/** The role the estate's SAR service is granted (hmpps-kotlin-lib's `ROLE_SAR_DATA_ACCESS`). */
export const DEFAULT_SAR_ROLE = 'ROLE_SAR_DATA_ACCESS';

/**
 * The door's deadline when not set: the SAR service gives a call 60 s, and the answer reads a
 * large trail, so most of that, leaving the caller time to read the refusal.
 */
export const DEFAULT_SAR_REQUEST_DEADLINE_MS = 55_000;

const ROLE = /^[A-Za-z0-9_.:-]{1,128}$/;

export const SAR_VARIABLES = {
  SAR_PORT: optionalPort('SAR_PORT'),
  SAR_AUTH_JWKS: optionalText(),
  SAR_AUTH_ISSUER: optionalText(),
  SAR_AUTH_ROLE: z
    .string()
    .regex(ROLE, { error: 'expected a role of 1-128 letters, digits or _ . : -, e.g. ROLE_SAR_DATA_ACCESS' })
    .default(DEFAULT_SAR_ROLE),
  SAR_REQUEST_DEADLINE_MS: wholeNumber(
    'SAR_REQUEST_DEADLINE_MS',
    DEFAULT_SAR_REQUEST_DEADLINE_MS,
    100,
    60_000,
  ),
};

type SarVariables = z.output<z.ZodObject<typeof SAR_VARIABLES>> & {
  readonly PORT: number;
  readonly MANAGEMENT_PORT: number;
};

/** What each required variable is, in its refusal. */
const REQUIRED: readonly [keyof SarVariables & string, string][] = [
  [
    'SAR_AUTH_JWKS',
    "the key set the SAR service's tokens are checked against (a file path or an https:// URL)",
  ],
  ['SAR_AUTH_ISSUER', "the iss of the SAR service's tokens (the organisation's authorisation server)"],
];

/**
 * With `SAR_PORT` the door needs its key set and its issuer, the key set one the service may
 * fetch or read, and a port of its own (0, any free port, excepted).
 */
export function sarRules(env: SarVariables, ctx: z.RefinementCtx): void {
  const jwks = env.SAR_AUTH_JWKS === undefined ? undefined : jwksSourceProblem(env.SAR_AUTH_JWKS);
  if (jwks !== undefined) ctx.addIssue({ code: 'custom', path: ['SAR_AUTH_JWKS'], message: jwks });
  if (env.SAR_PORT === undefined) return;
  for (const [name, what] of REQUIRED) {
    if (env[name] === undefined) {
      ctx.addIssue({ code: 'custom', path: [name], message: `required with SAR_PORT: ${what}` });
    }
  }
  for (const other of ['PORT', 'MANAGEMENT_PORT'] as const) {
    if (env.SAR_PORT !== 0 && env.SAR_PORT === env[other]) {
      ctx.addIssue({
        code: 'custom',
        path: ['SAR_PORT'],
        message: `SAR_PORT must be a port of its own: ${other} is ${env[other]} too`,
      });
    }
  }
}
