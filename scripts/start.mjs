#!/usr/bin/env node
// `npm start`: the embedded default on one machine. On first run it creates .dev/ (git-ignored)
// with a SQLite case store seeded from fixtures/; later runs reuse it. Then it serves and prints
// a request that works as pasted. Environment variables still override (e.g. PORT=9000 npm start).
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
process.chdir(root);
const cli = new URL('../dist/app/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('npm start: dist/ is missing; run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(cli.href);

const store = 'sqlite:.dev/cases.db';
if (!existsSync('.dev/cases.db')) {
  mkdirSync('.dev', { recursive: true });
  const status = await main(['cases', 'import', 'fixtures/cases.json', '--store', store]);
  if (status !== 0) process.exit(status);
}
process.env.CASE_STORE ??= store;
process.env.HOST ??= '127.0.0.1';
process.env.PORT ??= '8443';
process.stdout.write(
  `\nTry it (plain HTTP on loopback until mutual TLS lands):\n  curl -s http://${process.env.HOST}:${process.env.PORT}/case/X123456\n  API docs: http://${process.env.HOST}:${process.env.PORT}/docs\n\n`,
);
process.exitCode = await main(['serve']);
