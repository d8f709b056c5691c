import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A JavaScript runtime the service runs on, as a command line: `COMMAND ...ARGS bin/case-read.js`. */
export interface RuntimeCommand {
  readonly name: 'node' | 'bun' | 'deno';
  readonly command: string;
  readonly args: readonly string[];
}

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

/**
 * The runtime binaries come from the devDependencies `bun` and `deno` (npm ships each as a
 * binary inside a package). The binary itself is run, not npm's launcher script, so a
 * signal sent to the child reaches the service.
 */
function bunBinary(): string {
  return join(packageDir('bun'), 'bin', 'bun.exe');
}

function denoBinary(): string {
  const own = join(packageDir('deno'), process.platform === 'win32' ? 'deno.exe' : 'deno');
  if (existsSync(own)) return own;
  // Before the package's install script has linked it, the binary is in the platform package.
  const platform =
    { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform as string] ?? process.platform;
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const suffix = platform === 'linux' ? '-glibc' : '';
  return join(packageDir(`@deno/${platform}-${arch}${suffix}`), 'deno');
}

export const NODE: RuntimeCommand = { name: 'node', command: process.execPath, args: [] };
export const BUN: RuntimeCommand = { name: 'bun', command: bunBinary(), args: [] };
export const DENO: RuntimeCommand = { name: 'deno', command: denoBinary(), args: ['run', '-A'] };

/** Every runtime the service supports. */
export const RUNTIMES: readonly RuntimeCommand[] = [NODE, BUN, DENO];
