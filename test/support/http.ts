import { createHttpApp, type HttpAppOptions } from '../../src/adapters/http/app.js';
import type { HttpLogger } from '../../src/adapters/http/env.js';
import { LocalCredentialsIssuer } from '../../src/adapters/local-credentials/credentials-issuer.js';
import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { CrnFormat } from '../../src/domain/crn.js';
import { fixtureCases } from './fixtures.js';
import type { OpenApiDocument } from './openapi-validator.js';

export interface LogLine {
  level: 'info' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/** A logger that keeps every line, so tests can assert what was (and was not) logged. */
export function recordingLogger(): HttpLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (fields, message) => lines.push({ level: 'info', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  };
}

/** The HTTP app over the shipped fixtures, held in memory. */
export function fixtureApp(overrides: Partial<HttpAppOptions> = {}) {
  return createHttpApp({
    repository: new InMemoryCaseRepository(fixtureCases()),
    crnFormat: CrnFormat.default,
    perimeter: { disabled: true },
    queueTokens: { issuer: new LocalCredentialsIssuer(), defaultRoleArn: null, durationSeconds: 3600 },
    ...overrides,
  });
}

export async function servedDocument(app: ReturnType<typeof fixtureApp>): Promise<OpenApiDocument> {
  const response = await app.request('/openapi.json');
  if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}
