import 'reflect-metadata';
import type { ChildProcess } from 'node:child_process';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCa } from '../../src/adapters/x509/pki.js';
import {
  BIN,
  cliInProcess,
  type InProcessServeSetup,
  prepareServeInProcess,
  startServe,
  stopChildren,
} from '../support/cli.js';
import { FAKE_CA_ARN, FakeAcmPca } from '../support/fake-acm-pca.js';
import { NODE, RUNTIMES, type RuntimeCommand } from '../support/runtimes.js';

/**
 * A consumer's whole certificate life, with the `openssl` and `curl` binaries only, as the
 * consumer guide (docs) gives it: key and CSR → `case-read certs sign` → a read with the new
 * certificate → inside the renewal window, EST `simplereenroll` with a fresh key → a read with
 * the renewed certificate → a second renewal with the old certificate refused (409) → each bad
 * CSR refused with its status and nothing issued. On Node, Bun and Deno, and with the
 * `acm-pca` issuer against a stand-in of AWS Private CA.
 */

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  await stopChildren(children);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** A consumer's working folder and the service it talks to, with its tools. */
class Consumer {
  constructor(
    readonly dir: string,
    readonly url: string,
    readonly ca: string,
  ) {}

  /**
   * Runs a tool in the consumer's folder; its stdout. Never blocking this process: a
   * stand-in of AWS Private CA may be answering in it meanwhile.
   */
  async run(command: string, args: string[], input?: Buffer): Promise<string> {
    if (input === undefined) return (await run(command, args, { cwd: this.dir, encoding: 'utf8' })).stdout;
    return execFileSync(command, args, {
      cwd: this.dir,
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  }

  /** `openssl req`: a new key (never leaving this folder) and a CSR for `subject`. */
  async keyAndCsr(
    name: string,
    subject: string,
    key: string[] = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  ): Promise<void> {
    await this.run('openssl', [
      'req',
      '-new',
      ...key,
      '-nodes',
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    ]);
  }

  /** The CSR as EST wants it: base64 of its DER. */
  async csrBase64(name: string): Promise<string> {
    const der = await run('openssl', ['req', '-in', `${name}.csr`, '-outform', 'DER'], {
      cwd: this.dir,
      encoding: 'buffer',
    });
    return Buffer.from(der.stdout).toString('base64');
  }

  /** `curl` with a client certificate and key; status, headers (lower-case) and body. */
  async curl(path: string, as: { cert: string; key: string }, extra: string[] = []): Promise<Answer> {
    const port = new URL(this.url).port;
    const out = await this.run('curl', [
      '-sS',
      '--resolve',
      `localhost:${port}:127.0.0.1`,
      '--cacert',
      this.ca,
      '--cert',
      as.cert,
      '--key',
      as.key,
      '-D',
      'headers.txt',
      '-o',
      'body.txt',
      '-w',
      '%{http_code}',
      ...extra,
      `https://localhost:${port}${path}`,
    ]);
    const headers: Record<string, string> = {};
    for (const line of readFileSync(join(this.dir, 'headers.txt'), 'utf8').split(/\r?\n/)) {
      const at = line.indexOf(':');
      if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    return { status: Number(out), headers, body: readFileSync(join(this.dir, 'body.txt'), 'utf8') };
  }

  /** POST a CSR body to simplereenroll. */
  renew(
    as: { cert: string; key: string },
    apiKey: string,
    body: string,
    type = 'application/pkcs10',
  ): Promise<Answer> {
    writeFileSync(join(this.dir, 'request.b64'), body);
    return this.curl('/.well-known/est/simplereenroll', as, [
      '-H',
      `x-api-key: ${apiKey}`,
      '-H',
      `Content-Type: ${type}`,
      '--data-binary',
      '@request.b64',
    ]);
  }

  /** The certificates of a base64 certs-only PKCS#7 answer, as `openssl pkcs7 -print_certs` reads them, into `file`. */
  async certificatesOf(answer: Answer, file: string): Promise<string> {
    const der = Buffer.from(answer.body.replace(/\s+/g, ''), 'base64');
    await this.run('openssl', ['pkcs7', '-inform', 'DER', '-print_certs', '-out', file], der);
    return readFileSync(join(this.dir, file), 'utf8');
  }
}

const run = promisify(execFile);

const problemOf = (answer: Answer) => (JSON.parse(answer.body) as { type: string }).type.split(':').at(-1);

interface Life {
  /** The service's directory, set up with the CLI's commands run in this process. */
  readonly setup: InProcessServeSetup;
  readonly consumer: Consumer;
  readonly serviceDir: string;
  readonly output: () => string;
  readonly apiKey: string;
  readonly token: string;
}

/** A service and a consumer `consumer-a` onboarded from its own CSR with `certs sign`. */
async function onboard(
  label: string,
  runtime: RuntimeCommand,
  issuerEnv: (pki: string) => Promise<Record<string, string>>,
): Promise<Life> {
  const serviceDir = mkdtempSync(join(tmpdir(), `case-read-est-${label}-`));
  const consumerDir = mkdtempSync(join(tmpdir(), `case-read-consumer-${label}-`));
  dirs.push(serviceDir, consumerDir);
  const base = await prepareServeInProcess(serviceDir);
  const pki = join(serviceDir, 'pki');
  const env = { ...base.env, ...(await issuerEnv(pki)) };
  const setup: InProcessServeSetup = { ...base, env, cli: cliInProcess(env) };
  await setup.cli('clients', 'add', 'consumer-a', '--permissions', 'getCase,renewCertificate');
  const apiKey = (await setup.cli('keys', 'issue', 'consumer-a')).trim();
  const token = (await setup.cli('tokens', 'mint', '--client', 'consumer-a', '--dir', pki)).trim();
  const started = await startServe(env, runtime);
  children.push(started.child);
  const consumer = new Consumer(consumerDir, started.url, join(pki, 'ca.pem'));
  // The consumer makes its key and CSR; the operator signs the CSR (20 days: inside the window).
  await consumer.keyAndCsr('client', '/CN=consumer-a');
  const sign = [
    'certs',
    'sign',
    join(consumerDir, 'client.csr'),
    '--client',
    'consumer-a',
    '--days',
    '20',
    '--out',
    join(consumerDir, 'client.pem'),
  ];
  // With acm-pca, as a process: the AWS SDK takes the stand-in's credentials from the
  // process's own environment, not from the CLI's.
  if (env.CLIENT_CERT_ISSUER === 'acm-pca') await cliAsync(env, sign);
  else await setup.cli(...sign);
  return { setup, consumer, serviceDir, output: started.output, apiKey, token };
}

/** The CLI without blocking this process (the Private CA stand-in answers in it). */
async function cliAsync(env: Record<string, string>, args: string[]): Promise<string> {
  return (
    await run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    })
  ).stdout;
}

const OLD = { cert: 'client.pem', key: 'client-key.pem' };
const NEW = { cert: 'renewed.pem', key: 'renewed-key.pem' };

/** Read, renew, read with the renewed certificate, and renew the old one again (409). */
async function renewalLife(life: Life): Promise<{ renewedSerial: string }> {
  const { consumer, apiKey, token } = life;
  const read = (as: { cert: string; key: string }) =>
    consumer.curl('/case/X123456', as, [
      '-H',
      `x-api-key: ${apiKey}`,
      '-H',
      `Authorization: Bearer ${token}`,
    ]);
  const first = await read(OLD);
  expect(first.status).toBe(200);
  // Inside the renewal window: every answer says when the certificate ends.
  expect(first.headers['client-certificate-expires']).toMatch(
    /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  );

  await consumer.keyAndCsr('renewed', '/CN=consumer-a');
  const renewed = await consumer.renew(OLD, apiKey, await consumer.csrBase64('renewed'));
  expect(renewed.status, renewed.body).toBe(200);
  expect(renewed.headers['content-type']).toBe('application/pkcs7-mime; smime-type=certs-only');
  const pem = await consumer.certificatesOf(renewed, 'renewed.pem');
  const facts = await consumer.run('openssl', [
    'x509',
    '-in',
    'renewed.pem',
    '-noout',
    '-subject',
    '-serial',
    '-ext',
    'extendedKeyUsage,basicConstraints',
  ]);
  expect(facts).toMatch(/subject=CN = consumer-a\n/);
  expect(facts).toMatch(/TLS Web Client Authentication/);
  expect(facts).toMatch(/CA:FALSE/);
  // The renewed certificate is for the new key.
  const publicKeyOf = (args: string[]) => consumer.run('openssl', args);
  expect(await publicKeyOf(['x509', '-in', 'renewed.pem', '-noout', '-pubkey'])).toBe(
    await publicKeyOf(['pkey', '-in', 'renewed-key.pem', '-pubout']),
  );
  expect(pem).toContain('BEGIN CERTIFICATE');

  const second = await read(NEW);
  expect(second.status).toBe(200);
  // 90 days: outside the 30-day window, so no expiry header.
  expect(second.headers['client-certificate-expires']).toBeUndefined();

  await consumer.keyAndCsr('again', '/CN=consumer-a');
  const again = await consumer.renew(OLD, apiKey, await consumer.csrBase64('again'));
  expect([again.status, problemOf(again)]).toEqual([409, 'already-renewed']);
  const serial = /serial=([0-9A-F]+)/.exec(facts)?.[1] ?? '';
  return { renewedSerial: serial.replace(/^0+/, '') };
}

describe.each(RUNTIMES)(
  'a consumer renews its own certificate, on $name, with the local issuer',
  (runtime: RuntimeCommand) => {
    it('key + CSR → certs sign → read → simplereenroll → read → 409 for the old one', async () => {
      const life = await onboard(runtime.name.toLowerCase(), runtime, async (pki) => ({
        CLIENT_CERT_ISSUER: 'local',
        CLIENT_CA_CERT: join(pki, 'ca.pem'),
        CLIENT_CA_KEY: join(pki, 'ca-key.pem'),
      }));
      const { renewedSerial } = await renewalLife(life);

      // Audited: the issuance with the new serial, the refusal with its problem.
      const records = (
        JSON.parse(await life.setup.cli('audit', 'query', '--client', 'consumer-a', '--json')) as {
          operation: string;
          status: number;
          problem: string | null;
          issued: string | null;
        }[]
      ).filter((r) => r.operation === 'renewCertificate');
      expect(records.map((r) => [r.status, r.problem, r.issued])).toEqual([
        [200, null, renewedSerial],
        [409, 'already-renewed', null],
      ]);

      if (runtime !== NODE) return;
      const { consumer, apiKey } = life;
      // Every bad CSR, with the renewed certificate (which has not been renewed yet): refused, nothing issued.
      await consumer.keyAndCsr('weak', '/CN=consumer-a', ['-newkey', 'rsa:1024']);
      await consumer.keyAndCsr('org', '/O=Elsewhere/CN=consumer-a');
      await consumer.keyAndCsr('other', '/CN=consumer-b');
      await consumer.keyAndCsr('good', '/CN=consumer-a');
      const good = await consumer.csrBase64('good');
      const tampered = Buffer.from(good, 'base64');
      tampered[tampered.length - 2] = (tampered[tampered.length - 2] ?? 0) ^ 0xff;
      const cases: [string, string, number, string, string?][] = [
        ['not base64', '%%% not base64 %%%', 400, 'bad-certificate-request'],
        ['base64, not a CSR', Buffer.from('hello').toString('base64'), 400, 'bad-certificate-request'],
        ['over 16 KiB', Buffer.alloc(20_000, 7).toString('base64'), 413, 'request-too-large'],
        ['a signature that does not verify', tampered.toString('base64'), 400, 'bad-certificate-request'],
        ['an RSA key of 1024 bits', await consumer.csrBase64('weak'), 400, 'bad-certificate-request'],
        ['a subject with more than the CN', await consumer.csrBase64('org'), 400, 'bad-certificate-request'],
        ['another CN', await consumer.csrBase64('other'), 400, 'bad-certificate-request'],
        ['another content type', good, 415, 'bad-certificate-request', 'text/plain'],
        // Well formed, but the renewed certificate has 90 days left: outside the 30-day window.
        ['too early', good, 409, 'renew-too-early'],
      ];
      for (const [what, body, status, problem, type] of cases) {
        const answer = await consumer.renew(NEW, apiKey, body, type);
        expect([what, answer.status, problemOf(answer)]).toEqual([what, status, problem]);
      }
      // A client without the permission.
      await life.setup.cli('clients', 'add', 'consumer-b', '--permissions', 'getCase');
      await consumer.keyAndCsr('b', '/CN=consumer-b');
      await life.setup.cli(
        'certs',
        'sign',
        join(consumer.dir, 'b.csr'),
        '--client',
        'consumer-b',
        '--days',
        '20',
        '--out',
        join(consumer.dir, 'b.pem'),
      );
      const keyB = (await life.setup.cli('keys', 'issue', 'consumer-b')).trim();
      const forbidden = await consumer.renew({ cert: 'b.pem', key: 'b-key.pem' }, keyB, good);
      expect([forbidden.status, problemOf(forbidden)]).toEqual([403, 'permission-denied']);

      // Nothing was issued by any of them: still exactly one issuance in the trail.
      const issued = (
        JSON.parse(await life.setup.cli('audit', 'query', '--json')) as { issued: string | null }[]
      ).filter((r) => r.issued !== null);
      expect(issued).toHaveLength(1);

      // cacerts: the issuing CA, the same way.
      const cacerts = await consumer.curl('/.well-known/est/cacerts', NEW, ['-H', `x-api-key: ${apiKey}`]);
      expect(cacerts.status).toBe(200);
      expect(await consumer.certificatesOf(cacerts, 'cacerts.pem')).toContain('case-read development CA');

      // The consumer's private keys were never written by the service: in none of its files or logs.
      const secrets = ['client-key.pem', 'renewed-key.pem', 'good-key.pem'].map(
        (f) => readFileSync(join(consumer.dir, f), 'utf8').split('\n')[1] ?? 'missing',
      );
      const written = [
        life.output(),
        ...filesUnder(life.serviceDir).map((f) => readFileSync(f).toString('latin1')),
      ].join('\n');
      for (const line of secrets) expect(written).not.toContain(line);
    }, 120_000);
  },
);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('a consumer renews its own certificate with the acm-pca issuer (AWS Private CA stand-in)', () => {
  const fake = new FakeAcmPca();
  afterAll(async () => fake.stop());

  it('the same life; the stand-in was asked with the end-entity client-auth template', async () => {
    const life = await onboard('acmpca', NODE, async (pki) => {
      const endpoint = await fake.start(
        await loadCa(
          readFileSync(join(pki, 'ca.pem'), 'utf8'),
          readFileSync(join(pki, 'ca-key.pem'), 'utf8'),
        ),
      );
      return {
        CLIENT_CERT_ISSUER: 'acm-pca',
        ACM_PCA_ARN: FAKE_CA_ARN,
        ACM_PCA_ENDPOINT: endpoint,
        ACM_PCA_REGION: 'eu-west-2',
        AWS_ACCESS_KEY_ID: 'AKIAFAKEFAKEFAKE1234',
        AWS_SECRET_ACCESS_KEY: 'fakeSecret/AbCdEfGhIjKlMnOpQrStUvWxYz0123456',
      };
    });
    await renewalLife(life);
    const issues = fake.calls.filter((c) => c.operation === 'IssueCertificate');
    expect(issues).toHaveLength(2);
    for (const call of issues) {
      expect(call.body).toMatchObject({
        CertificateAuthorityArn: FAKE_CA_ARN,
        TemplateArn: 'arn:aws:acm-pca:::template/EndEntityClientAuthCertificate/V1',
      });
    }
  }, 120_000);
});

describe('the consumer guide (docs/consumers/certificates.md), run as written', () => {
  it('its operator and consumer commands, in order, onboard and renew', async () => {
    const guide = readFileSync(join(process.cwd(), 'docs/consumers/certificates.md'), 'utf8');
    const blocks = [...guide.matchAll(/```sh (consumer|operator)\n([\s\S]*?)```/g)].map((m) => ({
      who: m[1] as 'consumer' | 'operator',
      script: m[2] ?? '',
    }));
    expect(blocks.map((b) => b.who)).toEqual(['consumer', 'operator', 'consumer', 'consumer', 'consumer']);
    const serviceDir = mkdtempSync(join(tmpdir(), 'case-read-guide-'));
    const consumerDir = mkdtempSync(join(tmpdir(), 'case-read-guide-consumer-'));
    dirs.push(serviceDir, consumerDir);
    const base = await prepareServeInProcess(serviceDir);
    const pki = join(serviceDir, 'pki');
    const env = {
      ...base.env,
      CLIENT_CERT_ISSUER: 'local',
      CLIENT_CA_CERT: join(pki, 'ca.pem'),
      CLIENT_CA_KEY: join(pki, 'ca-key.pem'),
      // Short enough to be inside the 30-day renewal window at once.
      CLIENT_CERT_DAYS: '20',
    };
    const cli = cliInProcess(env);
    await cli('clients', 'add', 'consumer-a', '--permissions', 'getCase,renewCertificate');
    const started = await startServe(env, NODE);
    children.push(started.child);
    const variables = {
      CN: 'consumer-a',
      SERVICE: started.url.replace('127.0.0.1', 'localhost'),
      API_KEY: (await cli('keys', 'issue', 'consumer-a')).trim(),
      TOKEN: (await cli('tokens', 'mint', '--client', 'consumer-a', '--dir', pki)).trim(),
      CA: join(pki, 'ca.pem'),
    };
    for (const { who, script } of blocks) {
      // The operator's `case-read` is this checkout's binary, with the service's configuration.
      const prelude = `set -euo pipefail\ncase-read() { ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"; }\n`;
      await run('bash', ['-c', prelude + script], {
        cwd: consumerDir,
        env: { PATH: process.env.PATH ?? '', ...variables, ...(who === 'operator' ? env : {}) },
      });
    }
    const subject = await run('openssl', ['x509', '-in', 'renewed.pem', '-noout', '-subject'], {
      cwd: consumerDir,
    });
    expect(subject.stdout.trim()).toBe('subject=CN = consumer-a');
    const renewals = (
      JSON.parse(await cli('audit', 'query', '--client', 'consumer-a', '--json')) as {
        operation: string;
        status: number;
      }[]
    )
      .filter((r) => r.operation === 'renewCertificate')
      .map((r) => r.status);
    expect(renewals).toEqual([200]);
  }, 60_000);
});

describe('a service without an issuer (CLIENT_CERT_ISSUER none, the default)', () => {
  it('answers simplereenroll and cacerts 501 renewal-not-configured, a real CSR from a permitted client included', async () => {
    const serviceDir = mkdtempSync(join(tmpdir(), 'case-read-est-none-'));
    const consumerDir = mkdtempSync(join(tmpdir(), 'case-read-consumer-none-'));
    dirs.push(serviceDir, consumerDir);
    const setup = await prepareServeInProcess(serviceDir, { clientCn: 'consumer-a' });
    await setup.cli('clients', 'suspend', 'consumer-a');
    await setup.cli('clients', 'remove', 'consumer-a');
    await setup.cli('clients', 'add', 'consumer-a', '--permissions', 'getCase,renewCertificate');
    const apiKey = (await setup.cli('keys', 'issue', 'consumer-a')).trim();
    const started = await startServe(setup.env, NODE);
    children.push(started.child);
    const pki = join(serviceDir, 'pki');
    const consumer = new Consumer(consumerDir, started.url, join(pki, 'ca.pem'));
    const presented = { cert: join(pki, 'consumer-a.pem'), key: join(pki, 'consumer-a-key.pem') };
    await consumer.keyAndCsr('renewed', '/CN=consumer-a');
    const renewed = await consumer.renew(presented, apiKey, await consumer.csrBase64('renewed'));
    expect([renewed.status, problemOf(renewed)]).toEqual([501, 'renewal-not-configured']);
    const caCerts = await consumer.curl('/.well-known/est/cacerts', presented, [
      '-H',
      `x-api-key: ${apiKey}`,
    ]);
    expect([caCerts.status, problemOf(caCerts)]).toEqual([501, 'renewal-not-configured']);
  }, 30_000);
});
