import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CASE_READS } from '../../src/domain/case-operations.js';
import { consumerAgent, httpsRequest } from './https-client.js';
import { CURRENT, type RuntimeCommand } from './runtimes.js';

/** Stops each child still running (SIGTERM) and waits for it to exit: an e2e file's last step. */
export async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
}

export const BIN = fileURLToPath(new URL('../../bin/case-read.js', import.meta.url));
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `case-read` binary (dist/ is made by `npm run build`, which `npm test` runs
 * first), on the runtime running the tests unless another is given.
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  runtime: RuntimeCommand = CURRENT,
): CliResult {
  const result = spawnSync(runtime.command, [...runtime.args, BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The built CLI's entry module, the one bin/case-read.js loads. */
const BUILT_CLI = new URL('../../dist/app/cli.js', import.meta.url);

/**
 * The built CLI's `main` (dist/, as {@link runCli} runs it), run in this process: what a
 * command prints and the status it returns, without the second or more a new process costs
 * on a loaded machine. For setting things up and for checks of what a command does; what
 * only a process shows (the exit status a shell sees, output written around the `Io`,
 * variables read from `process.env`, signals) stays with {@link runCli}.
 *
 * The built module, not src/: a store written by a command here and read by `serve` (or the
 * other way round) is handled by one build, even when src/ has changed since the last one.
 *
 * Like runCli: the environment is `env` and PATH alone, stderr is not a TTY, and a relative
 * path is read from this process's directory (the repository's root under vitest, runCli's
 * `cwd`). `serve` is refused: it listens and handles signals, so it runs as a process
 * ({@link startServe}).
 */
export async function runCliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  if (args[0] === 'serve') throw new Error('serve runs as a process: use runCli or startServe');
  if (!existsSync(BUILT_CLI)) throw new Error('dist/ is missing; run `npm run build` first');
  const { main } = (await import(BUILT_CLI.href)) as typeof import('../../src/app/cli.js');
  let stdout = '';
  let stderr = '';
  const status = await main(args, {
    out: (line) => {
      stdout += `${line}\n`;
    },
    err: (line) => {
      stderr += `${line}\n`;
    },
    env: { PATH: process.env.PATH ?? '', ...env },
    stderrIsTty: false,
  });
  return { status, stdout, stderr };
}

/** {@link cliIn}, run in this process ({@link runCliInProcess}): resolves with stdout, rejects when the command fails. */
export function cliInProcess(env: Record<string, string>) {
  return async (...args: string[]): Promise<string> => {
    const result = await runCliInProcess(args, env);
    if (result.status !== 0)
      throw new Error(`case-read ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    return result.stdout;
  };
}

/** {@link runCli} without blocking: several commands run at once, as two operators would run them. */
export function runCliConcurrently(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(CURRENT.command, [...CURRENT.args, BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Starts `case-read serve` and resolves with its URL once it logs that it is listening (and
 * the SAR service's door's, with SAR_PORT).
 */
export function startServe(
  env: Record<string, string>,
  runtime: RuntimeCommand = CURRENT,
): Promise<{
  url: string;
  managementUrl: string;
  sarUrl?: string;
  child: ChildProcess;
  output: () => string;
}> {
  const child = spawn(runtime.command, [...runtime.args, BIN, 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', MANAGEMENT_PORT: '0', ...env },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Never leave a server behind: a test that gives up on it stops it.
      child.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${output}`));
    }, 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        const ready = JSON.parse(line) as { url: string; managementUrl: string; sarUrl?: string };
        resolve({
          url: ready.url,
          managementUrl: ready.managementUrl,
          ...(ready.sarUrl ? { sarUrl: ready.sarUrl } : {}),
          child,
          output: () => output,
        });
        return;
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}

/** A directory made ready for `case-read serve` with the CLI alone: PKI, fixtures, one client with a key and a token. */
export interface ServeSetup {
  readonly env: Record<string, string>;
  readonly ca: string;
  readonly client: { readonly cert: string; readonly key: string };
  readonly apiKey: string;
  readonly token: string;
  /** Runs a CLI command with this setup's environment; throws when it fails. */
  cli(...args: string[]): string;
}

/** The environment `serve` and the admin commands need, for stores and a dev PKI under `dir` (`dir/pki`). */
export function serveEnv(dir: string) {
  const pkiDir = join(dir, 'pki');
  return {
    ACCESS_STORE: `sqlite:${join(dir, 'access.db')}`,
    CASE_STORE: `sqlite:${join(dir, 'cases.db')}`,
    AUDIT_STORE: `sqlite:${join(dir, 'audit.db')}`,
    TLS_CERT: join(pkiDir, 'server.pem'),
    TLS_KEY: join(pkiDir, 'server-key.pem'),
    TLS_CLIENT_CA: join(pkiDir, 'ca.pem'),
    BEARER_JWKS: join(pkiDir, 'jwks.json'),
    BEARER_ISSUER: 'urn:case-read:dev-issuer',
    BEARER_AUDIENCE: 'case-read-service',
    // Tests stop serve at once; the delay before the listener closes is tested on its own.
    SHUTDOWN_DELAY_MS: '0',
  };
}

/** A CLI runner with a fixed environment that returns stdout and throws when the command fails. */
export function cliIn(env: Record<string, string>, runtime: RuntimeCommand = CURRENT) {
  return (...args: string[]): string => {
    const result = runCli(args, env, runtime);
    if (result.status !== 0)
      throw new Error(`case-read ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
    return result.stdout;
  };
}

export interface PrepareOptions {
  readonly clientCn?: string;
  /** Store URLs in place of the SQLite files under `dir`. */
  readonly stores?: Partial<Record<'CASE_STORE' | 'ACCESS_STORE' | 'AUDIT_STORE', string>>;
}

/** What the client {@link prepareServe} onboards may read: the three reads. */
const FIRST_CLIENT_PERMISSIONS = CASE_READS.join(',');

/** The commands that make `dir` ready for `serve`, in order (their outputs are read by {@link setupOf}). */
function setupCommands(pkiDir: string, clientCn: string): string[][] {
  return [
    ['pki', 'init', '--dir', pkiDir],
    ['pki', 'client', clientCn, '--dir', pkiDir, '--json'],
    ['cases', 'import', join(ROOT, 'fixtures/cases.json')],
    ['clients', 'add', clientCn, '--permissions', FIRST_CLIENT_PERMISSIONS],
    ['keys', 'issue', clientCn],
    ['tokens', 'mint', '--client', clientCn, '--dir', pkiDir],
  ];
}

/** The setup the outputs of {@link setupCommands} describe. */
function setupOf(env: ReturnType<typeof serveEnv>, outputs: readonly string[]): Omit<ServeSetup, 'cli'> {
  const [, certificate = '', , , apiKey = '', token = ''] = outputs;
  const client = JSON.parse(certificate) as { cert: string; key: string };
  return {
    env,
    ca: readFileSync(env.TLS_CLIENT_CA, 'utf8'),
    client: { cert: readFileSync(client.cert, 'utf8'), key: readFileSync(client.key, 'utf8') },
    apiKey: apiKey.trim(),
    token: token.trim(),
  };
}

export function prepareServe(
  dir: string,
  { clientCn = 'client-a', stores = {} }: PrepareOptions = {},
): ServeSetup {
  const env = { ...serveEnv(dir), ...stores };
  const cli = cliIn(env);
  const outputs = setupCommands(join(dir, 'pki'), clientCn).map((args) => cli(...args));
  return { ...setupOf(env, outputs), cli };
}

/** A {@link ServeSetup} whose commands run in this process ({@link runCliInProcess}). */
export interface InProcessServeSetup extends Omit<ServeSetup, 'cli'> {
  /** Runs a CLI command with this setup's environment, in this process; rejects when it fails. */
  cli(...args: string[]): Promise<string>;
}

/** {@link prepareServe} with the commands run in this process: the same directory, a second or more sooner. */
export async function prepareServeInProcess(
  dir: string,
  { clientCn = 'client-a', stores = {} }: PrepareOptions = {},
): Promise<InProcessServeSetup> {
  const env = { ...serveEnv(dir), ...stores };
  const cli = cliInProcess(env);
  const outputs: string[] = [];
  for (const args of setupCommands(join(dir, 'pki'), clientCn)) outputs.push(await cli(...args));
  return { ...setupOf(env, outputs), cli };
}

/**
 * `serve` started with `env`, `requests` reads of case X123456 one after another by the
 * setup's client (each must be answered 200), then stopped: what it logged.
 */
export async function serveReadsThenStop(
  setup: Pick<ServeSetup, 'ca' | 'client' | 'apiKey' | 'token'>,
  env: Record<string, string>,
  requests: number,
): Promise<string> {
  const server = await startServe(env);
  try {
    for (let i = 0; i < requests; i++) {
      const res = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/X123456`, {
        ca: setup.ca,
        ...setup.client,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      });
      if (res.status !== 200) throw new Error(`request ${i + 1} was answered ${res.status}: ${res.text}`);
    }
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      await exited;
    }
  }
  return server.output();
}

/** A keep-alive HTTPS agent presenting the setup's client certificate, with `sockets` connections at most. */
export function keepAliveAgent(setup: ServeSetup, sockets: number): Agent {
  return consumerAgent({
    maxSockets: sockets,
    ca: setup.ca,
    cert: setup.client.cert,
    key: setup.client.key,
    servername: 'localhost',
  });
}
