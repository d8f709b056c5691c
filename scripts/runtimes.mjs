// The runtimes the service runs on, as commands: `COMMAND ...ARGS bin/case-read.js`. Bun and
// Deno come from this project's devDependencies (npm ships each as a binary inside a
// package). The binary itself is run, not npm's launcher script, so a signal sent to the
// child reaches the service and /proc/PID/stat is the service's own CPU.
// Used by the end-to-end tests (test/support/runtimes.ts) and `npm run bench -- runtimes`.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const packageDir = (name) => dirname(require.resolve(`${name}/package.json`));

function denoBinary() {
  const own = join(packageDir('deno'), process.platform === 'win32' ? 'deno.exe' : 'deno');
  if (existsSync(own)) return own;
  // Before the package's install script has linked it, the binary is in the platform package.
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const platform = process.platform === 'linux' ? `linux-${arch}-glibc` : `${process.platform}-${arch}`;
  return join(packageDir(`@deno/${platform}`), process.platform === 'win32' ? 'deno.exe' : 'deno');
}

const onBun = globalThis.Bun !== undefined;
const onDeno = globalThis.Deno !== undefined;

// Under Node, this very binary; under Bun or Deno (whose execPath is their own), node on PATH.
export const NODE = { name: 'node', command: onBun || onDeno ? 'node' : process.execPath, args: [] };
// The bun package names its binary bun.exe on every platform.
export const BUN = { name: 'bun', command: join(packageDir('bun'), 'bin', 'bun.exe'), args: [] };
// The permissions the service needs, and no more: its files, its environment, the network
// (listening and its stores), and the system facts Node's os module reads. No -A.
export const DENO_PERMISSIONS = [
  '--allow-read',
  '--allow-write',
  '--allow-net',
  '--allow-env',
  '--allow-sys',
];
export const DENO = { name: 'deno', command: denoBinary(), args: ['run', ...DENO_PERMISSIONS] };
export const RUNTIMES = [NODE, BUN, DENO];
/** The runtime running this process: the CLI tests run the binary on it. */
export const CURRENT = onBun ? BUN : onDeno ? DENO : NODE;
