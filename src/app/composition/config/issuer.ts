import * as z from 'zod';
import {
  httpsUrl,
  oneOf,
  optionalText,
  presentIn,
  problemsOf,
  wholeNumber,
} from '../../../adapters/shared/variables.js';
import { DEFAULT_CLIENT_CERT_DAYS, DEFAULT_RENEW_WITHIN_DAYS } from '../../../domain/certificates/renew.js';
import type { Environment } from '../../../ports/stores.js';
import { ConfigError } from '../../config-error.js';
import { type AwsEndpointsOf, awsEndpointsFor } from './aws.js';
import { LISTENER_VARIABLES } from './listener.js';

/**
 * The issuer's variables: who signs consumers' certificates (nobody, the service with a CA
 * of its own, or AWS Private CA) and for how long, the rules between them, and the issuer's
 * configuration read alone for `certs sign`.
 */

/** Client certificates from a CSR, renewed over EST (decisions §12). */
export const ISSUER_VARIABLES = {
  CLIENT_CERT_ISSUER: oneOf(['none', 'local', 'acm-pca'], 'none'),
  CLIENT_CA_CERT: optionalText(),
  CLIENT_CA_KEY: optionalText(),
  CLIENT_CERT_DAYS: wholeNumber('CLIENT_CERT_DAYS', DEFAULT_CLIENT_CERT_DAYS, 1, 397),
  CLIENT_CERT_RENEW_WITHIN_DAYS: wholeNumber(
    'CLIENT_CERT_RENEW_WITHIN_DAYS',
    DEFAULT_RENEW_WITHIN_DAYS,
    1,
    397,
  ),
  ACM_PCA_ARN: z
    .string()
    .regex(
      /^arn:aws[a-z-]*:acm-pca:[a-z]{2}(-[a-z]+)+-\d:\d{12}:certificate-authority\/[A-Za-z0-9-]{1,64}$/,
      {
        error: 'expected an AWS Private CA ARN (arn:aws:acm-pca:REGION:ACCOUNT:certificate-authority/ID)',
      },
    )
    .optional(),
  ACM_PCA_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'expected an AWS region such as eu-west-2' })
    .default('eu-west-2'),
  ACM_PCA_ENDPOINT: httpsUrl().optional(),
};

/**
 * What `certs sign` reads: the variables that say who signs consumers' certificates, and the
 * two of the listener's that the rules between them need.
 */
const ISSUER_CONFIG_VARIABLES = {
  CLIENT_CERT_ISSUER: true,
  CLIENT_CA_CERT: true,
  CLIENT_CA_KEY: true,
  CLIENT_CERT_DAYS: true,
  ACM_PCA_ARN: true,
  ACM_PCA_REGION: true,
  ACM_PCA_ENDPOINT: true,
  // The time AWS Private CA is given for one certificate.
  REQUEST_DEADLINE_MS: true,
  // The bundle the service trusts: a CA it does not hold may not sign.
  TLS_CLIENT_CA: true,
} as const;

const issuerVariablesSchema = z
  .object({
    ...ISSUER_VARIABLES,
    REQUEST_DEADLINE_MS: LISTENER_VARIABLES.REQUEST_DEADLINE_MS,
    TLS_CLIENT_CA: LISTENER_VARIABLES.TLS_CLIENT_CA,
  })
  .pick(ISSUER_CONFIG_VARIABLES);

type IssuerVariables = z.output<typeof issuerVariablesSchema>;

/** A local CA needs its certificate and key; AWS Private CA needs its ARN. */
export function issuerRules(env: IssuerVariables, ctx: z.RefinementCtx): void {
  if (env.CLIENT_CERT_ISSUER === 'local') {
    for (const name of ['CLIENT_CA_CERT', 'CLIENT_CA_KEY'] as const) {
      if (env[name] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'required with CLIENT_CERT_ISSUER=local (PEM file)',
        });
      }
    }
  }
  if (env.CLIENT_CERT_ISSUER === 'acm-pca' && env.ACM_PCA_ARN === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['ACM_PCA_ARN'],
      message: 'required with CLIENT_CERT_ISSUER=acm-pca',
    });
  }
}

const issuerSchema = issuerVariablesSchema.superRefine(issuerRules);

/** What `certs sign` reads of the configuration: the issuer's variables and `TLS_CLIENT_CA`, no other. */
export type IssuerConfig = z.output<typeof issuerSchema> & AwsEndpointsOf;

/**
 * The issuer's variables alone, checked as `serve` checks them: `certs sign` needs neither the
 * server's key nor the bearer settings, so whoever signs consumers' certificates is not given
 * them. Throws {@link ConfigError} naming every bad variable.
 */
export function loadIssuerConfig(env: Environment, command: string): IssuerConfig {
  const parsed = issuerSchema.safeParse(presentIn(env, Object.keys(ISSUER_CONFIG_VARIABLES)));
  if (!parsed.success)
    throw new ConfigError(problemsOf(parsed.error).map((problem) => `${command} needs ${problem}`));
  const aws = awsEndpointsFor(env, parsed.data);
  if (aws.problems.length > 0) throw new ConfigError([...aws.problems]);
  return { ...parsed.data, awsEndpoints: aws.endpoints };
}
