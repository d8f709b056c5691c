import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  type CliResult,
  prepareServeInProcess,
  ROOT,
  startServe,
  stopChildren,
} from '../../support/cli.js';
import { NODE } from '../../support/runtimes.js';

/**
 * What each command of the built CLI loads (issue 48, item 4): the operator commands load
 * neither Hono, the HTTP adapter, prom-client nor pino; those are `serve`'s (and `openapi`'s,
 * for Hono and the HTTP adapter). Each command runs as a process under a preload module whose
 * resolve hook (`module.registerHooks`) appends every URL resolved, by import or require, to a
 * file: what the process loaded, lazy imports included.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-loading-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOOK = `import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
const log = process.env.CASE_READ_LOAD_LOG;
const seen = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (log && !seen.has(resolved.url)) {
      seen.add(resolved.url);
      appendFileSync(log, resolved.url + '\\n');
    }
    return resolved;
  },
});
`;
const hook = join(dir, 'record-loads.mjs');
writeFileSync(hook, HOOK);
const RECORDING = { ...NODE, args: ['--import', pathToFileURL(hook).href] };

/** What an operator command must not load: the HTTP stack, the metrics and the logger of `serve`. */
const SERVE_ONLY: readonly [string, RegExp][] = [
  ['hono', /\/node_modules\/hono\//],
  ['@hono/*', /\/node_modules\/@hono\//],
  ['prom-client', /\/node_modules\/prom-client\//],
  ['pino', /\/node_modules\/pino\//],
  ['the HTTP adapter', /\/dist\/adapters\/http\//],
];

let logs = 0;
const newLog = () => join(dir, `loaded-${++logs}.txt`);
const loaded = (log: string): string[] =>
  existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
/** The serve-only things among `urls`, each by name with the first URL of it, relative to the repository. */
const serveOnlyIn = (urls: readonly string[]): Record<string, string> => {
  const root = pathToFileURL(ROOT).href;
  const found: Record<string, string> = {};
  for (const [name, pattern] of SERVE_ONLY) {
    const url = urls.find((u) => pattern.test(u));
    if (url !== undefined) found[name] = url.replace(root, '');
  }
  return found;
};

/** Runs the built CLI under the recording hook: its result and every URL it resolved. */
function runRecorded(args: string[], env: Record<string, string>): CliResult & { urls: string[] } {
  const log = newLog();
  const result = spawnSync(RECORDING.command, [...RECORDING.args, BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env, CASE_READ_LOAD_LOG: log },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, urls: loaded(log) };
}

let env: Record<string, string>;
let signing: Record<string, string>;
let localIssuer: Record<string, string>;
let csr: string;
let servedUrls: string[];

beforeAll(async () => {
  const setup = await prepareServeInProcess(dir);
  env = setup.env;
  await setup.cli('audit', 'keygen', '--dir', join(dir, 'keys'));
  signing = { AUDIT_SIGNING_KEY: join(dir, 'keys', 'audit-signing-key.pem') };
  const pki = join(dir, 'pki');
  localIssuer = {
    CLIENT_CERT_ISSUER: 'local',
    CLIENT_CA_CERT: join(pki, 'ca.pem'),
    CLIENT_CA_KEY: join(pki, 'ca-key.pem'),
  };
  csr = join(dir, 'client-a.csr');
  execFileSync(
    'openssl',
    [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      join(dir, 'client-a-key.pem'),
      '-out',
      csr,
      '-subj',
      '/CN=client-a',
    ],
    { stdio: 'ignore' },
  );
  // The control, and the audit store the audit commands read: serve, started and stopped.
  const log = newLog();
  const served = await startServe({ ...env, ...signing, CASE_READ_LOAD_LOG: log }, RECORDING);
  await stopChildren([served.child]);
  servedUrls = loaded(log);
});

describe('what each command of the built CLI loads', () => {
  it('serve loads Hono, the HTTP adapter, prom-client and pino (the control: the hook sees them)', () => {
    expect(Object.keys(serveOnlyIn(servedUrls)).sort()).toEqual(SERVE_ONLY.map(([name]) => name).sort());
  });

  it('config check loads none of them, the TLS files, the JWKS and the audit signing key read and checked', () => {
    const run = runRecorded(['config', 'check'], { ...env, ...signing });
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toContain('configuration is valid');
    expect(serveOnlyIn(run.urls)).toEqual({});
  });

  it('certs sign loads none of them, a certificate issued by the local CA', () => {
    const run = runRecorded(['certs', 'sign', csr, '--client', 'client-a'], { ...env, ...localIssuer });
    expect([run.status, run.stdout]).toEqual([0, expect.stringMatching(/^-----BEGIN CERTIFICATE-----/)]);
    // The issuer's X.509 code, loaded only on this path, was loaded: the recording saw it.
    expect(run.urls.some((url) => url.endsWith('/dist/adapters/x509/local-issuer.js'))).toBe(true);
    expect(serveOnlyIn(run.urls)).toEqual({});
  });

  it('stores migrate loads none of them', () => {
    const run = runRecorded(['stores', 'migrate'], env);
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(serveOnlyIn(run.urls)).toEqual({});
  });

  it('the audit commands load none of them: verify, checkpoints, vkey', () => {
    for (const args of [
      ['audit', 'verify'],
      ['audit', 'checkpoints'],
      ['audit', 'vkey'],
    ]) {
      const run = runRecorded(args, { ...env, ...signing });
      expect([args, run.status, run.stderr]).toEqual([args, 0, '']);
      expect([args, serveOnlyIn(run.urls)]).toEqual([args, {}]);
    }
  });

  it('openapi loads Hono and the HTTP adapter it builds the document from, but neither prom-client nor pino', () => {
    const run = runRecorded(['openapi'], {});
    expect(run.status).toBe(0);
    expect(Object.keys(serveOnlyIn(run.urls)).sort()).toEqual(['@hono/*', 'hono', 'the HTTP adapter']);
  });
});
