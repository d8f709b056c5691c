import { createHttpApp } from '../../adapters/http/app.js';
import { LocalCredentialsIssuer } from '../../adapters/local-credentials/credentials-issuer.js';
import { InMemoryCaseRepository } from '../../adapters/memory/case-repository.js';
import type { CrnFormat } from '../../domain/crn.js';

/**
 * The part of the operator commands' composition root that builds the HTTP app, in a module
 * of its own: only `openapi` loads Hono and the HTTP adapter, no other operator command.
 */

/** `openapi`: the document `serve` serves at /openapi.json, from the same routes. */
export async function openApiDocument(crnFormat: CrnFormat, publicUrl: string): Promise<string> {
  const app = createHttpApp({
    repository: new InMemoryCaseRepository([]),
    crnFormat,
    publicUrl,
    queueTokens: { issuer: new LocalCredentialsIssuer(), defaultRoleArn: null, durationSeconds: 900 },
    perimeter: { disabled: true },
  });
  return (await app.request('/openapi.json')).text();
}
