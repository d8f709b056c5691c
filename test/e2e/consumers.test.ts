import { type ChildProcess, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, ROOT, type ServeSetup, startServe } from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';

/**
 * The README's consumer recipes, run as a consumer would run them against `serve`:
 * Python's standard library, Java 17's HttpClient from PKCS12 stores made with the
 * README's commands, and Go's standard library. Each must print the status and the very
 * body a Node client gets. `.ci/run` installs Go (Debian's golang-go) where it is missing;
 * Python and the JDK are on every machine of this kind.
 */

const has = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const PASSWORD = 'changeit';
/** On CI every tool is there (`.ci/run` installs Go): a missing one fails rather than skips. */
const ON_CI = process.env.CI === 'true';

let dir: string;
let setup: ServeSetup;
let child: ChildProcess;
let url: string;
let env: Record<string, string>;
let files: Record<'ca' | 'cert' | 'key', string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-consumers-'));
  setup = prepareServe(dir);
  files = {
    ca: join(dir, 'pki', 'ca.pem'),
    cert: join(dir, 'client.pem'),
    key: join(dir, 'client-key.pem'),
  };
  writeFileSync(files.cert, setup.client.cert);
  writeFileSync(files.key, setup.client.key, { mode: 0o600 });
  writeFileSync(join(dir, 'api-key'), setup.apiKey, { mode: 0o600 });
  writeFileSync(join(dir, 'token'), setup.token, { mode: 0o600 });
  const started = await startServe(setup.env);
  child = started.child;
  // The server certificate names localhost: a consumer verifies the host name.
  url = started.url.replace('127.0.0.1', 'localhost');
  env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    CASE_READ_URL: url,
    CASE_READ_CA: files.ca,
    CASE_READ_CERT: files.cert,
    CASE_READ_KEY: files.key,
    CASE_READ_API_KEY_FILE: join(dir, 'api-key'),
    CASE_READ_TOKEN_FILE: join(dir, 'token'),
  };
}, 60_000);
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  rmSync(dir, { recursive: true, force: true });
});

/** What a Node client gets for the same path: the reference. */
async function reference(path: string) {
  const response = await httpsRequest(`${url}${path}`, {
    ca: setup.ca,
    cert: setup.client.cert,
    key: setup.client.key,
    headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
  });
  return { status: response.status, body: response.json() as Record<string, unknown> };
}

/** Runs a consumer; its first line is the status, its second the body. */
function consumer(command: string, args: string[], extra: Record<string, string> = {}) {
  const result = spawnSync(command, args, {
    env: { ...env, ...extra },
    encoding: 'utf8',
    timeout: 120_000,
    cwd: dir,
  });
  const [status, body] = result.stdout.trim().split('\n');
  return {
    exit: result.status,
    status: Number(status),
    body: JSON.parse(body ?? 'null') as Record<string, unknown>,
    stderr: result.stderr,
  };
}

const CALLS = [
  ['X123456', ''],
  ['X123456', '/community-manager'],
  ['N000404', ''],
] as const;

describe('consumer recipes', () => {
  it.skipIf(!has('python3') && !ON_CI)(
    'Python (standard library): the same status and body as Node',
    async () => {
      for (const [crn, path] of CALLS) {
        const got = consumer('python3', [join(ROOT, 'examples/consumers/python/case_read.py'), crn, path]);
        const want = await reference(`/case/${crn}${path}`);
        expect(got.stderr).toBe('');
        expect(got.status).toBe(want.status);
        expect(got.exit).toBe(want.status === 200 ? 0 : 1);
        expect({ ...got.body, requestId: undefined }).toEqual({ ...want.body, requestId: undefined });
      }
    },
  );

  it.skipIf((!has('java') || !has('keytool') || !has('openssl')) && !ON_CI)(
    'Java 17 HttpClient, from PKCS12 stores made as the README says',
    async () => {
      const keystore = join(dir, 'client.p12');
      const truststore = join(dir, 'truststore.p12');
      const openssl = spawnSync('openssl', [
        'pkcs12',
        '-export',
        '-in',
        files.cert,
        '-inkey',
        files.key,
        '-name',
        'client',
        '-out',
        keystore,
        '-passout',
        `pass:${PASSWORD}`,
      ]);
      expect(openssl.status, openssl.stderr?.toString()).toBe(0);
      const keytool = spawnSync('keytool', [
        '-importcert',
        '-noprompt',
        '-alias',
        'case-read-ca',
        '-file',
        files.ca,
        '-keystore',
        truststore,
        '-storetype',
        'PKCS12',
        '-storepass',
        PASSWORD,
      ]);
      expect(keytool.status, keytool.stderr?.toString()).toBe(0);
      const stores = {
        CASE_READ_KEYSTORE: keystore,
        CASE_READ_TRUSTSTORE: truststore,
        CASE_READ_STORE_PASSWORD: PASSWORD,
      };
      for (const [crn, path] of CALLS) {
        const got = consumer(
          'java',
          [join(ROOT, 'examples/consumers/java/CaseRead.java'), crn, path],
          stores,
        );
        const want = await reference(`/case/${crn}${path}`);
        expect(got.status, got.stderr).toBe(want.status);
        expect({ ...got.body, requestId: undefined }).toEqual({ ...want.body, requestId: undefined });
      }
    },
    120_000,
  );

  it.skipIf(!has('go') && !ON_CI)(
    'Go (standard library): the same status and body as Node',
    async () => {
      const goEnv = { GOCACHE: join(dir, 'go-cache'), GOPATH: join(dir, 'go'), GO111MODULE: 'off' };
      for (const [crn, path] of CALLS) {
        const got = consumer('go', ['run', join(ROOT, 'examples/consumers/go/main.go'), crn, path], goEnv);
        const want = await reference(`/case/${crn}${path}`);
        expect(got.status, got.stderr).toBe(want.status);
        expect({ ...got.body, requestId: undefined }).toEqual({ ...want.body, requestId: undefined });
      }
    },
    180_000,
  );
});
