/**
 * The two AWS resource names a consumer's queue access is made of, each with its one rule:
 * the IAM role assumed for the consumer, and the SQS queue the credentials are limited to.
 */
export type RoleArn = string & { readonly __brand: 'RoleArn' };
export type QueueArn = string & { readonly __brand: 'QueueArn' };

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[A-Za-z0-9+=,.@_/-]{1,128}$/;
const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

export const RoleArn = {
  example: 'arn:aws:iam::123456789012:role/my-role',
  tryParse: (raw: string): RoleArn | undefined => (ROLE_ARN.test(raw) ? (raw as RoleArn) : undefined),
};

export const QueueArn = {
  example: 'arn:aws:sqs:eu-west-2:123456789012:my-queue',
  tryParse: (raw: string): QueueArn | undefined => (QUEUE_ARN.test(raw) ? (raw as QueueArn) : undefined),
};
