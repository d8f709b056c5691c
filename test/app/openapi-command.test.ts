import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    expect(runCli(['openapi', '--html']).status).toBe(2);
  });

  // The page itself, opened in Chromium: test/app/openapi-html.test.ts.
  it('--html FILE writes the page (mode 0644, through a temporary file renamed) and names it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'case-read-openapi-'));
    try {
      const file = join(dir, 'api-reference.html');
      const result = runCli(['openapi', '--html', file]);
      expect(result.status).toBe(0);
      const { size, mode } = statSync(file);
      expect(result.stdout).toBe(`API reference written to ${file} (${size} bytes)\n`);
      expect(mode & 0o777).toBe(0o644);
      expect(readdirSync(dir)).toEqual(['api-reference.html']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--html FILE that cannot be written: exit 1, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'case-read-openapi-'));
    try {
      const file = join(dir, 'missing', 'api-reference.html');
      const result = runCli(['openapi', '--html', file]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`${file} cannot be written (ENOENT)`);
      expect(result.stdout).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
