import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, ROOT, runCli } from './cli.js';
import { CURRENT } from './runtimes.js';

/** A `case-read witness serve` process, as the CLI runs it (dist/: `npm run build`). */
export interface WitnessProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: () => string;
  stop(): Promise<void>;
}

/** Starts `case-read witness serve` with `env` (on 127.0.0.1, a free port) and resolves once it listens. */
export function startWitnessProcess(env: Record<string, string>): Promise<WitnessProcess> {
  const child = spawn(CURRENT.command, [...CURRENT.args, BIN, 'witness', 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
  });
  let output = '';
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`witness serve did not start:\n${output}`));
    }, 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"listening"'));
      if (line === undefined) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stdout.on('data', (more: Buffer) => {
        output += more.toString();
      });
      resolve({ url: (JSON.parse(line) as { url: string }).url, child, output: () => output, stop });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`witness serve exited with ${code}:\n${output}`));
    });
  });
}

/** A witness started by {@link startWitness}: its process and its verifier key. */
export interface RunningWitness extends WitnessProcess {
  readonly vkey: string;
}

/** A witness key for `name` in `dir` (`witness keygen`): its file and verifier key. */
export function witnessKey(dir: string, name: string): { readonly keyFile: string; readonly vkey: string } {
  const made = runCli(['witness', 'keygen', '--name', name, '--dir', dir]);
  if (made.status !== 0) throw new Error(`witness keygen exited ${made.status}: ${made.stderr}`);
  const vkey = made.stdout.trimEnd().split('\n').at(-1) ?? '';
  return { keyFile: join(dir, 'witness-key'), vkey };
}

/**
 * `case-read witness serve` of the logs `logVkeys` with the key in `key` (a test's witness): its
 * state in `store`, else DIR/witness.db; plain HTTP on loopback, a free port.
 */
export async function startWitness(
  dir: string,
  key: { readonly keyFile: string; readonly vkey: string },
  logVkeys: readonly string[],
  options: { readonly store?: string } = {},
): Promise<RunningWitness> {
  const logs = join(dir, 'logs');
  writeFileSync(logs, logVkeys.map((v) => `log ${v}\n`).join(''));
  const started = await startWitnessProcess({
    WITNESS_KEY: key.keyFile,
    WITNESS_LOGS: logs,
    WITNESS_STORE: options.store ?? `sqlite:${join(dir, 'witness.db')}`,
  });
  return { ...started, vkey: key.vkey };
}
