import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';

/** Declares the security schemes and builds the OpenAPI 3.1 document once, at start-up. */
export function buildOpenApiDocument(app: OpenAPIHono<AppEnv>, serverUrl: string): string {
  const registry = app.openAPIRegistry;
  registry.registerComponent('securitySchemes', 'mutualTLS', {
    type: 'mutualTLS',
    description:
      'A client certificate issued by the operating organisation; its common name identifies the client.',
  });
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'The API key issued to the client, sent as it is (not Base64-encoded).',
  });
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A JWT issued to the client; its client_id (or sub) is the certificate common name.',
  });
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Case Information Read Service',
      version: '1.0',
      description:
        'Read-only details held about a person under supervision, by case reference number (crn). ' +
        'Every response is `Cache-Control: no-store`; every error is RFC 9457 problem+json.',
      contact: { name: 'case-read-service operators' },
    },
    servers: [{ url: serverUrl, description: 'This service' }],
    tags: [
      { name: 'Case', description: 'What is held about one case' },
      { name: 'Queue', description: "Temporary credentials for the consumer's own message queue" },
      { name: 'Risk', description: 'Risk predictor scores (versioned gateway path)' },
      { name: 'Certificates', description: 'Renewal of the client certificate, over EST (RFC 7030)' },
      {
        name: 'Subject access',
        description: "The estate's subject access request: what is held about a person, and who was given it",
      },
    ],
  });
  return JSON.stringify(document);
}
