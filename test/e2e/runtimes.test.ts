import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_OPERATIONS, CASE_READS, casePath } from '../../src/domain/case-operations.js';
import { jwksOf, SAR_ISSUER, sarToken, signingKey } from '../support/authorisation-server.js';
import { cliIn, ROOT, runCli, serveEnv, startServe } from '../support/cli.js';
import { type HttpsResponse, httpsRequest } from '../support/https-client.js';
import { RUNTIMES, type RuntimeCommand } from '../support/runtimes.js';
import { windowWithRoom } from '../support/windows.js';

/**
 * The whole service, end to end, as `case-read serve` started under each runtime: Node, Bun
 * and Deno (both from this project's devDependencies). Everything is set up with the CLI
 * alone, run on the same runtime (PKI, case import, clients, keys, tokens); requests cross
 * real mutual-TLS handshakes. What every runtime answers is kept and compared with Node's,
 * byte for byte.
 */

const QUEUE = 'arn:aws:sqs:eu-west-2:000000000000:e2e-queue';
/**
 * Every case read, as the table lists them, of a case with every field (X123456) and of one
 * with every optional field null or empty (A000001); and a crn with no case (N000404).
 */
const PATHS = [
  ...['X123456', 'A000001'].flatMap((crn) => CASE_OPERATIONS.map((row) => casePath(row, crn))),
  '/case/N000404',
];

interface Cert {
  readonly cert: string;
  readonly key: string;
}

/** The answers of one runtime, by path: status, content type and body (problems without their request id). */
const answers = new Map<string, Map<string, string>>();

const comparable = (response: HttpsResponse) => {
  const type = String(response.headers['content-type']);
  const body = type.startsWith('application/problem+json')
    ? JSON.stringify({ ...(response.json() as object), requestId: undefined })
    : response.text;
  return `${response.status} ${type}\n${body}`;
};

/** Never leaves a server or its files behind, whatever the tests did. */
async function stopAndRemove(child: ChildProcess | undefined, dir: string): Promise<void> {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  rmSync(dir, { recursive: true, force: true });
}

describe.each(RUNTIMES)('case-read serve on $name', (runtime: RuntimeCommand) => {
  let dir: string;
  let env: Record<string, string>;
  let child: ChildProcess;
  let output: () => string;
  let url: string;
  let sarUrl: string;
  let ca: string;
  let sarKey: Awaited<ReturnType<typeof signingKey>>;
  const certs: Record<string, Cert> = {};
  const keys: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `case-read-e2e-${runtime.name}-`));
    env = {
      ...serveEnv(dir),
      CREDENTIALS_ISSUER: 'local',
      STS_ROLE_ARN: 'arn:aws:iam::000000000000:role/e2e',
    };
    // The CLI runs on the runtime under test too.
    const cli = cliIn(env, runtime);
    const pkiDir = join(dir, 'pki');
    cli('pki', 'init', '--dir', pkiDir);
    // Signed audit checkpoints, made and checked on this runtime.
    cli('audit', 'keygen', '--dir', join(dir, 'audit-key'));
    env.AUDIT_SIGNING_KEY = join(dir, 'audit-key', 'audit-signing-key.pem');
    const issue = (cn: string, pki = pkiDir) => {
      const files = JSON.parse(cli('pki', 'client', cn, '--dir', pki, '--json')) as {
        cert: string;
        key: string;
      };
      certs[cn] = { cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') };
    };
    issue('client-a');
    issue('client-b');
    issue('client-c');
    issue('stranger'); // a certificate from the client CA, for a CN that is no client
    cli('pki', 'init', '--dir', join(dir, 'foreign'));
    issue('client-a-foreign', join(dir, 'foreign')); // signed by a CA the service does not trust
    cli('cases', 'import', join(ROOT, 'fixtures/cases.json'));
    cli(
      'clients',
      'add',
      'client-a',
      '--permissions',
      // Every case read, as the table lists them, and queue tokens.
      [...CASE_READS, 'issueQueueToken'].join(','),
      '--queue-arn',
      QUEUE,
    );
    cli('clients', 'add', 'client-b', '--permissions', 'getCase');
    // 2 requests in a window (a day or so) with an hour left at least: serve counts in windows
    // aligned to the epoch, by its own clock, so one chosen now, not where the clock falls
    // (a day's turns at midnight UTC), holds the three requests made below.
    const quotaWindow = windowWithRoom(86_400_000, 3_600_000);
    cli('clients', 'add', 'client-c', '--permissions', 'getCase', '--rate-limit', `2/${quotaWindow}`);
    for (const cn of ['client-a', 'client-b', 'client-c']) {
      keys[cn] = cli('keys', 'issue', cn).trim();
      tokens[cn] = cli('tokens', 'mint', '--client', cn, '--dir', pkiDir).trim();
    }
    ca = readFileSync(env.TLS_CLIENT_CA as string, 'utf8');
    // The SAR service's door (decisions §23), its authorisation server's keys in a file.
    sarKey = await signingKey('as-1');
    env.SAR_PORT = '0';
    env.SAR_AUTH_JWKS = join(dir, 'sar-jwks.json');
    env.SAR_AUTH_ISSUER = SAR_ISSUER;
    writeFileSync(env.SAR_AUTH_JWKS, JSON.stringify(jwksOf([sarKey])));
    const started = await startServe(env, runtime);
    child = started.child;
    output = started.output;
    url = started.url.replace('127.0.0.1', 'localhost');
    sarUrl = (started.sarUrl ?? '').replace('127.0.0.1', 'localhost');
    // The listening line names the runtime it runs on: this is the runtime under test.
    expect(started.output()).toContain(`"runtime":"${runtime.name} `);
  }, 120_000);

  afterAll(() => stopAndRemove(child, dir));

  const call = (
    path: string,
    as: string | undefined,
    options: { method?: string; headers?: Record<string, string>; key?: boolean; bearer?: boolean } = {},
  ) =>
    httpsRequest(`${url}${path}`, {
      ca,
      ...(as ? certs[as] : {}),
      method: options.method ?? 'GET',
      headers: {
        ...(as && options.key !== false && keys[as] ? { 'x-api-key': keys[as] } : {}),
        ...(as && options.bearer !== false && tokens[as] ? { authorization: `Bearer ${tokens[as]}` } : {}),
        ...options.headers,
      },
    });

  it('completes no handshake without a client certificate, or with one from a foreign CA', async () => {
    await expect(call('/case/X123456', undefined)).rejects.toThrow();
    await expect(call('/case/X123456', 'client-a-foreign')).rejects.toThrow();
  });

  it('answers every case read, the same bytes as on Node', async () => {
    const mine = new Map<string, string>();
    for (const path of PATHS) mine.set(path, comparable(await call(path, 'client-a')));
    expect(mine.get('/case/X123456')).toMatch(/^200 application\/json/);
    expect(mine.get('/case/N000404')).toMatch(/^404 application\/problem\+json/);
    const fixtures = JSON.parse(readFileSync(join(ROOT, 'fixtures/cases.json'), 'utf8')) as {
      cases: { crn: string; personalDetails: unknown }[];
    };
    const x = fixtures.cases.find((c) => c.crn === 'X123456');
    expect(mine.get('/case/X123456')?.split('\n')[1]).toBe(JSON.stringify(x?.personalDetails));
    answers.set(runtime.name, mine);
    const node = answers.get('node');
    if (runtime.name !== 'node') {
      expect(node, 'Node runs first').toBeDefined();
      for (const path of PATHS) expect(mine.get(path), path).toBe(node?.get(path));
    }
  });

  it('hands out queue credentials from the local issuer on POST /token', async () => {
    const response = await call('/token', 'client-a', { method: 'POST', bearer: false });
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(Object.keys(response.json() as object).sort()).toEqual([
      'AccessKeyId',
      'Expiration',
      'SecretAccessKey',
      'SessionToken',
    ]);
  });

  it('answers every status of the perimeter as on Node', async () => {
    const sample: [string, Promise<HttpsResponse>][] = [
      ['200 read', call('/case/X123456/home-office-interest', 'client-a')],
      ['400 malformed crn', call('/case/not-a-crn', 'client-a')],
      ['401 no bearer token', call('/case/X123456', 'client-a', { bearer: false })],
      ['403 no API key', call('/case/X123456', 'client-a', { key: false })],
      ['403 not a client', call('/case/X123456', 'stranger')],
      ['403 no permission', call('/v1/persons/X123456/risks/scores', 'client-b')],
      ['404 no such case', call('/case/N000404', 'client-a')],
      ['405 wrong method', call('/case/X123456', 'client-a', { method: 'DELETE' })],
    ];
    const statuses = Object.fromEntries(
      await Promise.all(sample.map(async ([label, response]) => [label, (await response).status])),
    );
    expect(statuses).toStrictEqual({
      '200 read': 200,
      '400 malformed crn': 400,
      '401 no bearer token': 401,
      '403 no API key': 403,
      '403 not a client': 403,
      '403 no permission': 403,
      '404 no such case': 404,
      '405 wrong method': 405,
    });
    // client-c may make 2 requests in its window, which has an hour to run yet.
    const more = [];
    for (let i = 0; i < 3; i++) more.push((await call('/case/X123456', 'client-c')).status);
    expect(more).toStrictEqual([200, 200, 429]);
  });

  it('answers the SAR service on its door: no client certificate, its token', async () => {
    const headers = { authorization: `Bearer ${await sarToken({ key: sarKey })}` };
    const template = await httpsRequest(`${sarUrl}/subject-access-request/template`, { ca, headers });
    expect(template.status).toBe(200);
    expect(template.text).toBe(readFileSync(join(ROOT, 'templates/subject-access-request.mustache'), 'utf8'));
    const sar = await httpsRequest(`${sarUrl}/subject-access-request?crn=X123456`, { ca, headers });
    expect(sar.status, sar.text).toBe(200);
    expect((await httpsRequest(`${sarUrl}/subject-access-request/template`, { ca })).status).toBe(401);
  });

  it('takes no identity from headers: forged gateway headers from a client get its own identity, a stranger 403', async () => {
    const forged = { 'subject-distinguished-name': 'CN=client-a', 'cert-serial-number': '01' };
    // client-b claiming to be client-a is still client-b (getCase only).
    expect((await call('/v1/persons/X123456/risks/scores', 'client-b', { headers: forged })).status).toBe(
      403,
    );
    expect((await call('/case/X123456', 'stranger', { headers: forged })).status).toBe(403);
  });

  it('stops on SIGTERM with exit 0, and the audit trail it wrote verifies', async () => {
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    const verify = runCli(['audit', 'verify'], env, runtime);
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toMatch(
      /^audit chain intact: \d+ record\(s\)\n\d+ stored checkpoint\(s\) not checked: give --public-key to check them\n$/,
    );
    const records = Number(/(\d+) record/.exec(verify.stdout)?.[1]);
    // Every answered request under the perimeter is audited: at least the reads made above.
    expect(records).toBeGreaterThanOrEqual(PATHS.length + 8);
    // The checkpoint taken at shutdown covers the whole trail, in the store and in the log.
    const log = join(dir, 'serve.log');
    writeFileSync(log, output());
    const signed = runCli(
      [
        'audit',
        'verify',
        '--public-key',
        join(dir, 'audit-key', 'audit-signing-key.pub.pem'),
        '--checkpoints',
        log,
      ],
      env,
      runtime,
    );
    expect(signed.stdout).toContain(`audit chain intact: ${records} record(s), `);
    expect(signed.stdout).toMatch(new RegExp(`checkpoint at seq ${records} .*; 0 record\\(s\\) after it`));
    expect(signed.status).toBe(0);
  });
});

describe.each(RUNTIMES)('case-read serve on $name behind a trusted gateway', (runtime: RuntimeCommand) => {
  let dir: string;
  let child: ChildProcess;
  let url: string;
  let ca: string;
  const certs: Record<string, Cert> = {};
  let key = '';
  let token = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `case-read-e2e-gw-${runtime.name}-`));
    const env = { ...serveEnv(dir), IDENTITY_MODE: 'trusted-header', TRUSTED_GATEWAYS: 'gateway-1' };
    // The CLI runs on the runtime under test too.
    const cli = cliIn(env, runtime);
    const pkiDir = join(dir, 'pki');
    cli('pki', 'init', '--dir', pkiDir);
    for (const cn of ['gateway-1', 'stranger', 'client-a']) {
      const files = JSON.parse(cli('pki', 'client', cn, '--dir', pkiDir, '--json')) as {
        cert: string;
        key: string;
      };
      certs[cn] = { cert: readFileSync(files.cert, 'utf8'), key: readFileSync(files.key, 'utf8') };
    }
    cli('cases', 'import', join(ROOT, 'fixtures/cases.json'));
    cli('clients', 'add', 'client-a', '--permissions', 'getCase');
    key = cli('keys', 'issue', 'client-a').trim();
    token = cli('tokens', 'mint', '--client', 'client-a', '--dir', pkiDir).trim();
    ca = readFileSync(env.TLS_CLIENT_CA, 'utf8');
    const started = await startServe(env, runtime);
    child = started.child;
    url = started.url.replace('127.0.0.1', 'localhost');
  }, 120_000);

  afterAll(() => stopAndRemove(child, dir));

  const asClientA = (from: string | undefined) =>
    httpsRequest(`${url}/case/X123456`, {
      ca,
      ...(from ? certs[from] : {}),
      headers: {
        'subject-distinguished-name': 'O=Example,CN=client-a',
        'cert-serial-number': '0A:1B',
        'x-api-key': key,
        authorization: `Bearer ${token}`,
      },
    });

  it('takes the identity headers from the verified gateway', async () => {
    expect((await asClientA('gateway-1')).status).toBe(200);
  });

  it('answers the same forged headers from any other peer with 403, and from no certificate not at all', async () => {
    expect((await asClientA('stranger')).status).toBe(403);
    await expect(asClientA(undefined)).rejects.toThrow();
  });
});
