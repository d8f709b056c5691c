// The runtime check `case-read` (bin/case-read.js) and `npm start` (scripts/start.mjs) make
// before anything else is loaded: a Node below package.json's `engines.node` (the one home of
// the floor; Node 20's line ended on 2026-04-30) is refused in one line, exit 1, before a
// native module built for a newer Node can crash it (docs/runtimes.md). Bun and Deno report a
// Node version of their own; they are judged by their own releases. Plain JavaScript that any
// Node parses, with nothing imported but node:fs.
import { existsSync, readFileSync } from 'node:fs';

/** Exits the process, saying why in one line prefixed `who:`, unless this runtime is supported. */
export function requireSupportedRuntime(who) {
  const declared = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines
    ?.node;
  const floor = /^>=(\d+)\.(\d+)$/.exec(declared ?? '');
  if (floor === null) {
    process.stderr.write(
      `${who}: package.json's engines.node is not of the form >=MAJOR.MINOR: ${declared}\n`,
    );
    process.exit(1);
  }
  const [major, minor] = process.versions.node.split('.').map(Number);
  const [, needMajor, needMinor] = floor.map(Number);
  if (
    globalThis.Bun !== undefined ||
    globalThis.Deno !== undefined ||
    major > needMajor ||
    (major === needMajor && minor >= needMinor)
  ) {
    return;
  }
  // In a checkout, the one command that brings the Node the project is built with.
  const bring = existsSync(new URL('../scripts/registry-node.sh', import.meta.url))
    ? '; run eval "$(scripts/registry-node.sh --env)" to bring it'
    : '';
  process.stderr.write(
    `${who}: needs Node.js ${needMajor}.${needMinor} or later (24 LTS recommended); this is Node.js ${process.versions.node}${bring}\n`,
  );
  process.exit(1);
}
