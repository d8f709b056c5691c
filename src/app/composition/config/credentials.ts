import * as z from 'zod';
import { httpsUrl, oneOf, wholeNumber } from '../../../adapters/shared/variables.js';
import { RoleArn } from '../../../domain/queue/arns.js';

/**
 * The credentials variables: who issues what `POST /token` hands out (AWS STS, or the
 * service itself), and how STS is called.
 */

export const CREDENTIALS_VARIABLES = {
  CREDENTIALS_ISSUER: oneOf(['sts', 'local'], 'sts'),
  STS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, { error: 'expected an AWS region such as eu-west-2' })
    .default('eu-west-2'),
  STS_ENDPOINT: httpsUrl().optional(),
  STS_ROLE_ARN: z
    .string()
    .refine((raw) => RoleArn.tryParse(raw) !== undefined, { error: 'expected an IAM role ARN' })
    .optional(),
  STS_DURATION_SECONDS: wholeNumber('STS_DURATION_SECONDS', 3600, 900, 43_200),
  STS_TIMEOUT_MS: wholeNumber('STS_TIMEOUT_MS', 5000, 100, 60_000),
};
