#!/usr/bin/env node
// Lints the OpenAPI document `case-read openapi` prints (exactly what `serve` serves at
// /openapi.json) with Redocly CLI (recommended rules, redocly.yaml) and Spectral
// (spectral:oas, .spectral.yaml). Needs dist/ (`npm run build`). Fails on anything either
// reports: an error, a warning, or (Spectral) an info or hint.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// Every tool runs on this Node, never on whichever `node` is first on PATH.
const node = (args, env = process.env) =>
  spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const bin = (name) => realpathSync(join(root, 'node_modules', '.bin', name));
const fail = (message) => {
  process.stderr.write(`lint:openapi: ${message}\n`);
  process.exit(1);
};

// The document, from the command a client generator would use. The environment is left
// as it is, so CRN_PATTERN and PUBLIC_URL shape it as they would for `case-read openapi`.
const printed = node([join(root, 'bin', 'case-read.js'), 'openapi']);
if (printed.status !== 0) fail(`case-read openapi exited ${printed.status}:\n${printed.stderr}`);
if (printed.stdout.trim() === '') fail('case-read openapi printed nothing');
let document;
try {
  document = JSON.parse(printed.stdout);
} catch (error) {
  fail(`case-read openapi printed no JSON (${error.message})`);
}

const dir = mkdtempSync(join(tmpdir(), 'case-read-openapi-'));
let failed = false;
try {
  // Indented, so both tools' line numbers mean something; the content is the same.
  const file = join(dir, 'openapi.json');
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);

  // Redocly: no telemetry, no update check (both would reach the network). It exits 0 on
  // warnings, so its JSON report's totals decide.
  const redoclyEnv = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  const redocly = node(
    [bin('redocly'), 'lint', file, '--config', 'redocly.yaml', '--format', 'json'],
    redoclyEnv,
  );
  let report;
  try {
    report = JSON.parse(redocly.stdout.slice(redocly.stdout.indexOf('{')));
  } catch {
    process.stdout.write(`redocly (recommended): no report\n${redocly.stdout}${redocly.stderr}`);
    failed = true;
  }
  if (report !== undefined) {
    const { errors, warnings, ignored } = report.totals;
    process.stdout.write(
      `redocly (recommended): ${errors} error(s), ${warnings} warning(s), ${ignored} ignored\n`,
    );
    for (const p of report.problems) {
      const where = p.location?.[0];
      process.stdout.write(
        `  ${where?.start?.line}:${where?.start?.col} ${p.severity} ${p.ruleId} ${where?.pointer}: ${p.message}\n`,
      );
    }
    if (errors + warnings > 0 || redocly.status !== 0) failed = true;
  }

  // Spectral: a local ruleset extending the bundled spectral:oas, so no ruleset is fetched
  // (it would follow an external $ref; the document has none). Exits non-zero on any result
  // of severity hint or above.
  const spectral = node([
    bin('spectral'),
    'lint',
    file,
    '--ruleset',
    '.spectral.yaml',
    '--fail-severity',
    'hint',
  ]);
  if (spectral.status === 0) {
    process.stdout.write('spectral (spectral:oas): no results\n');
  } else {
    process.stdout.write(
      `spectral (spectral:oas): exited ${spectral.status}\n${spectral.stdout}${spectral.stderr}`,
    );
    failed = true;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
