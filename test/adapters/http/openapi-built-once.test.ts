import { describe, expect, it, vi } from 'vitest';
import { buildOpenApiDocument } from '../../../src/adapters/http/openapi.js';
import { fixtureApp } from '../../support/http.js';

vi.mock('../../../src/adapters/http/openapi.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/adapters/http/openapi.js')>();
  return { buildOpenApiDocument: vi.fn(actual.buildOpenApiDocument) };
});

describe('GET /openapi.json', () => {
  it('serves a document built once, when the app is made, not per request', async () => {
    const build = vi.mocked(buildOpenApiDocument);
    build.mockClear();
    const app = fixtureApp();
    expect(build).toHaveBeenCalledTimes(1);
    const bodies = await Promise.all([1, 2, 3].map(async () => (await app.request('/openapi.json')).text()));
    expect(build).toHaveBeenCalledTimes(1);
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0] ?? '')).toHaveProperty('openapi');
  });
});
