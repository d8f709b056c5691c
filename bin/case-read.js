#!/usr/bin/env node
// The `case-read` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run by `npm ci` through the prepare script, and by `npm test`).
//
// First of all, the runtime: Node before 22.15 is refused before anything else is loaded
// (docs/runtimes.md). Node 20's line ended on 2026-04-30, and the dependencies need 22.15.
// Bun and Deno report a Node version of their own; they are judged by their own releases.
const [major, minor] = process.versions.node.split('.').map(Number);
if (
  globalThis.Bun === undefined &&
  globalThis.Deno === undefined &&
  (major < 22 || (major === 22 && minor < 15))
) {
  process.stderr.write(
    `case-read: needs Node.js 22.15 or later (24 LTS recommended); this is Node.js ${process.versions.node}\n`,
  );
  process.exit(1);
}
const { existsSync } = await import('node:fs');
const entry = new URL('../dist/app/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('case-read: dist/ is missing; run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
