#!/usr/bin/env node
// Lints the served OpenAPI document with Redocly CLI (recommended rules, see redocly.yaml).
// The document is taken from the built app (dist/, made by `npm run build`), exactly as
// GET /openapi.json serves it, and written to a temporary file for the linter.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { createHttpApp } = await import('../dist/adapters/http/app.js');
const { CrnFormat } = await import('../dist/domain/crn.js');
const app = createHttpApp({
  repository: {},
  crnFormat: CrnFormat.default,
  perimeter: { disabled: true },
  queueTokens: {
    issuer: {
      issue: async () => {
        throw new Error('not used');
      },
    },
    defaultRoleArn: null,
    durationSeconds: 3600,
  },
});
const response = await app.request('/openapi.json');
const dir = mkdtempSync(join(tmpdir(), 'case-read-openapi-'));
const file = join(dir, 'openapi.json');
writeFileSync(file, await response.text());
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const run = (format) =>
  spawnSync(
    'npx',
    ['--no-install', 'redocly', 'lint', file, '--config', 'redocly.yaml', '--format', format],
    {
      env,
      encoding: 'utf8',
    },
  );
// Redocly exits 0 on warnings; this project treats a warning as a failure.
const json = run('json');
rmSync(dir, { recursive: true, force: true });
let totals;
try {
  totals = JSON.parse(json.stdout.slice(json.stdout.indexOf('{'))).totals;
} catch {
  process.stderr.write(`redocly lint gave no report:\n${json.stdout}\n${json.stderr}\n`);
  process.exit(1);
}
const problems = totals.errors + totals.warnings;
process.stdout.write(
  `openapi lint: ${totals.errors} error(s), ${totals.warnings} warning(s), ${totals.ignored} ignored\n`,
);
if (problems > 0) process.stdout.write(`${json.stdout}\n`);
process.exit(problems > 0 || json.status !== 0 ? 1 : 0);
