import * as z from 'zod';
import {
  AWS_ACM_PCA,
  AWS_STS,
  type AwsEndpoint,
  type AwsEndpoints,
  awsEndpointsOf,
} from '../../../adapters/shared/aws-endpoints.js';
import type { Environment } from '../../../ports/stores.js';

/**
 * The AWS SDK's own endpoint settings, as the service holds them: which AWS clients a
 * configuration uses, and the endpoint each goes to.
 */

/**
 * The AWS SDK's own endpoint settings, held to the service's rule and shown by `config
 * check` (decisions §20): checked, with the shared config file's, by
 * adapters/shared/aws-endpoints.ts when an AWS client is in use.
 */
export const AWS_SDK_VARIABLES = {
  AWS_ENDPOINT_URL: z.string().optional(),
  AWS_ENDPOINT_URL_STS: z.string().optional(),
  AWS_ENDPOINT_URL_ACM_PCA: z.string().optional(),
  AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: z.string().optional(),
  AWS_CONFIG_FILE: z.string().optional(),
  AWS_SHARED_CREDENTIALS_FILE: z.string().optional(),
  AWS_PROFILE: z.string().optional(),
};

/**
 * The endpoint each AWS client the configuration uses goes to, by the SDK's service id (`STS`,
 * `ACM PCA`), when a setting names one; a client without one goes to the SDK's endpoint for
 * its region. Found by adapters/shared/aws-endpoints.ts, handed to the client explicitly, and
 * shown by `config check`.
 */
export interface AwsEndpointsOf {
  readonly awsEndpoints: Readonly<Record<string, AwsEndpoint>>;
}

/**
 * The endpoints of the AWS clients a configuration uses (STS for `POST /token`, AWS Private
 * CA for client certificates), and what is wrong with the SDK's settings for them.
 */
export function awsEndpointsFor(
  env: Environment,
  values: { readonly CREDENTIALS_ISSUER?: string; readonly CLIENT_CERT_ISSUER: string },
): AwsEndpoints {
  return awsEndpointsOf(env, [
    ...(values.CREDENTIALS_ISSUER === 'sts' ? [AWS_STS] : []),
    ...(values.CLIENT_CERT_ISSUER === 'acm-pca' ? [AWS_ACM_PCA] : []),
  ]);
}
