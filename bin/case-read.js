#!/usr/bin/env node
// The `case-read` command. The TypeScript sources are compiled to dist/ by `npm run build`
// (run by `npm ci` through the prepare script, and by `npm test`).
//
// First of all, the runtime: a Node below the floor is refused before anything else is loaded.
import { existsSync } from 'node:fs';
import { requireSupportedRuntime } from './supported-runtime.js';

requireSupportedRuntime('case-read');
const entry = new URL('../dist/app/cli.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('case-read: dist/ is missing; run `npm run build` first\n');
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
