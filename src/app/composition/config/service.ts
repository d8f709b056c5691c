import * as z from 'zod';
import { presentIn, problemsOf } from '../../../adapters/shared/variables.js';
import { parseQuota } from '../../../domain/access/quota.js';
import { CrnFormat, DEFAULT_CRN_PATTERN } from '../../../domain/crn.js';
import type { Environment } from '../../../ports/stores.js';
import { ConfigError } from '../../config-error.js';
import { nodeEnvMode } from '../posture.js';
import { SERVICE_INFO_VARIABLES } from '../service-info.js';
import { AUDIT_VARIABLES, auditRules } from './audit.js';
import { AWS_SDK_VARIABLES } from './aws.js';
import { BEARER_VARIABLES, bearerRules } from './bearer.js';
import { CREDENTIALS_VARIABLES } from './credentials.js';
import { ISSUER_VARIABLES, issuerRules } from './issuer.js';
import { identityRules, LISTENER_ADDRESS_VARIABLES, LISTENER_VARIABLES } from './listener.js';
import { SAR_VARIABLES, sarRules } from './sar.js';
import { otlpHeaderRules, TRACES_VARIABLES } from './traces.js';

/**
 * The service's own variables, all areas together in one schema with the rules between them,
 * besides the four store variables: each area's from its file beside this one, in the order
 * every problem and `config check` lists them, and the few that are no area's.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const variablesSchema = z.object({
  ...LISTENER_VARIABLES,
  ...AUDIT_VARIABLES,
  ...BEARER_VARIABLES,
  ...LISTENER_ADDRESS_VARIABLES,
  // The SAR service's door (decisions §23): a listener of its own when SAR_PORT is set.
  ...SAR_VARIABLES,
  RATE_LIMIT_DEFAULT: z
    .string()
    .default('100/1s')
    .transform((raw, ctx) => {
      try {
        return parseQuota(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  ...CREDENTIALS_VARIABLES,
  ...ISSUER_VARIABLES,
  ...AWS_SDK_VARIABLES,
  // Trimmed, case-blind; shown as the mode read (posture.ts refuses a value of no known mode).
  NODE_ENV: z
    .string()
    .optional()
    .transform((raw) => (raw === undefined ? undefined : (nodeEnvMode(raw) ?? raw))),
  // Node's own; read to refuse 0 in production (posture.ts).
  NODE_TLS_REJECT_UNAUTHORIZED: z.string().optional(),
  CRN_PATTERN: z
    .string()
    .default(DEFAULT_CRN_PATTERN)
    .transform((raw, ctx) => {
      try {
        return CrnFormat.of(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  PUBLIC_URL: z.string().default('/'),
  // What /info on the management listener says (service-info.ts): PRODUCT_ID, GIT_COMMIT.
  ...SERVICE_INFO_VARIABLES,
  LOG_LEVEL: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  // OpenTelemetry's own variables (decisions §10).
  ...TRACES_VARIABLES,
});

const envSchema = variablesSchema.superRefine((env, ctx) => {
  otlpHeaderRules(env, ctx);
  identityRules(env, ctx);
  issuerRules(env, ctx);
  auditRules(env, ctx);
  bearerRules(env, ctx);
  sarRules(env, ctx);
});

export type ServiceVariables = z.output<typeof envSchema>;

/** The service's own variables, besides the four store variables (the store kinds' own are listed by the registry). */
export const SERVICE_VARIABLES = Object.keys(variablesSchema.shape) as readonly (keyof ServiceVariables)[];

/** The service's own variables read from `env` and checked, with the rules between them. */
export const readServiceVariables = (env: Environment) =>
  envSchema.safeParse(presentIn(env, Object.keys(variablesSchema.shape)));

/** The crn pattern alone, for the CLI's stores: `CRN_PATTERN` or its default. */
export function crnFormatOf(env: Environment): ServiceVariables['CRN_PATTERN'] {
  const parsed = variablesSchema.shape.CRN_PATTERN.safeParse(presentIn(env, ['CRN_PATTERN']).CRN_PATTERN);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error, 'CRN_PATTERN'));
  return parsed.data;
}
