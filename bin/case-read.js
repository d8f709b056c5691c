#!/usr/bin/env node
// The `case-read` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run by `npm ci` through the prepare script, and by `npm test`).
//
// First of all, the runtime: a Node below package.json's `engines.node` (the one home of the
// floor; Node 20's line ended on 2026-04-30) is refused before anything else is loaded
// (docs/runtimes.md). Bun and Deno report a Node version of their own; they are judged by
// their own releases.
import { existsSync, readFileSync } from 'node:fs';

const declared = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines?.node;
const floor = /^>=(\d+)\.(\d+)$/.exec(declared ?? '');
if (floor === null) {
  process.stderr.write(
    `case-read: package.json's engines.node is not of the form >=MAJOR.MINOR: ${declared}\n`,
  );
  process.exit(1);
}
const [major, minor] = process.versions.node.split('.').map(Number);
const [, needMajor, needMinor] = floor.map(Number);
if (
  globalThis.Bun === undefined &&
  globalThis.Deno === undefined &&
  (major < needMajor || (major === needMajor && minor < needMinor))
) {
  process.stderr.write(
    `case-read: needs Node.js ${needMajor}.${needMinor} or later (24 LTS recommended); this is Node.js ${process.versions.node}\n`,
  );
  process.exit(1);
}
const entry = new URL('../dist/app/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('case-read: dist/ is missing; run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
