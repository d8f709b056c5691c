import { createRoute, z } from '@hono/zod-openapi';
import type { OperationGuard } from './cases.routes.js';
import { gatewayTimeout, problem, unavailable } from './route-responses.js';

export const QueueCredentialsSchema = z
  .object({
    AccessKeyId: z.string().openapi({ example: 'ASIAIOSFODNN7EXAMPLE' }),
    SecretAccessKey: z.string(),
    SessionToken: z.string(),
    Expiration: z.iso
      .datetime({ offset: true })
      .openapi({ description: 'When the credentials stop working (ISO 8601)' }),
  })
  .openapi('QueueCredentials', {
    description:
      "The Credentials object of the AWS STS AssumeRole response, field names as STS gives them. They allow only sqs:ReceiveMessage, sqs:DeleteMessage, sqs:ChangeMessageVisibility and sqs:GetQueueAttributes on the caller's own queue.",
  });

/** `POST /token`: not versioned; client certificate and API key, no bearer token. */
export function tokenRoutes(guard: OperationGuard) {
  return {
    issueQueueToken: createRoute({
      method: 'post',
      path: '/token',
      operationId: 'issueQueueToken',
      middleware: guard('issueQueueToken'),
      tags: ['Queue'],
      summary: "Temporary credentials for the caller's message queue",
      description:
        'Calls AWS STS AssumeRole and returns its Credentials. Only for clients with a queue configured. No request body is sent.',
      security: [{ mutualTLS: [], apiKey: [] }],
      responses: {
        200: {
          description: 'Temporary credentials',
          content: { 'application/json': { schema: QueueCredentialsSchema } },
        },
        403: problem(
          'API key missing or invalid, client not allowed, permission not granted, or no queue configured',
        ),
        429: problem('Rate limit exceeded'),
        500: problem('Unexpected error'),
        502: problem('The credentials service failed'),
        503: unavailable,
        504: gatewayTimeout('The credentials service'),
      },
    }),
  };
}
export type TokenRoutes = ReturnType<typeof tokenRoutes>;
