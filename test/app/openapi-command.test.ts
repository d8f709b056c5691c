import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixtureApp, servedDocument } from '../support/http.js';

/**
 * `case-read openapi`: the served document, for a client generator, which cannot fetch
 * `/openapi.json` by URL from behind the perimeter (mutual TLS and an API key).
 */
describe('case-read openapi', () => {
  it('prints exactly the document the service serves', async () => {
    const result = runCli(['openapi']);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(await servedDocument(fixtureApp()));
  });

  it('with PUBLIC_URL and CRN_PATTERN as serve would use them', async () => {
    const result = runCli(['openapi'], {
      PUBLIC_URL: 'https://case-read.example.org',
      CRN_PATTERN: '^[A-Z]{2}[0-9]{4}$',
    });
    const document = JSON.parse(result.stdout) as {
      servers: { url: string }[];
      paths: Record<string, { get: { parameters: { name: string; schema: { pattern?: string } }[] } }>;
    };
    expect(document.servers[0]?.url).toBe('https://case-read.example.org');
    const crn = document.paths['/case/{crn}']?.get.parameters.find((p) => p.name === 'crn');
    expect(crn?.schema.pattern).toBe('^[A-Z]{2}[0-9]{4}$');
  });

  it('takes no argument', () => {
    expect(runCli(['openapi', 'extra']).status).toBe(2);
  });
});
