import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Config,
  ConfigError,
  loadConfig,
  loadIssuerConfig,
} from '../../../src/app/composition/config.js';
import { hopLines, hopsOf } from '../../../src/app/composition/hops.js';
import { createCredentialsIssuer } from '../../../src/app/composition/issuers.js';
import { STORE_REGISTRY } from '../../../src/app/composition/store-kinds.js';
import type { Environment } from '../../../src/ports/stores.js';
import { runCli, runCliInProcess } from '../../support/cli.js';
import { FakeSts } from '../../support/fake-sts.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * What the runtime and the SDKs read from the environment, held to the service's rules
 * (decisions §20): the AWS SDK's endpoint settings, `NODE_TLS_REJECT_UNAUTHORIZED`, `NODE_ENV`
 * read trimmed and case-blind, the OTLP headers, and `clients add --obo-jwks`. Each at the
 * configuration, and through the built CLI as an operator meets it (`config check`, `serve`,
 * `clients …`).
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-environment-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** No AWS file of the machine's own is read: the home directory is this test's. */
const HOME = { HOME: dir };

/** The variables that have no default, in production, and nothing of AWS's. */
const PRODUCTION = {
  ...HOME,
  NODE_ENV: 'production',
  TLS_CERT: '/etc/case-read/server.pem',
  TLS_KEY: '/etc/case-read/server-key.pem',
  TLS_CLIENT_CA: '/etc/case-read/clients-ca.pem',
  BEARER_MODE: 'off',
};

const load = (env: Environment): Config => loadConfig({ ...PRODUCTION, ...env }, STORE_REGISTRY);

function problemsOf(env: Environment): readonly string[] {
  try {
    load(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

const HTTPS_ONLY = 'expected an https:// URL (http:// only to a loopback host: 127.0.0.1, ::1, localhost)';
const AWS_WHY = 'the AWS SDK sends signed requests there, and credentials come back on it';

describe("the AWS SDK's endpoint settings are the service's", () => {
  it.each([
    ['AWS_ENDPOINT_URL_STS', 'http://sts.example.org'],
    ['AWS_ENDPOINT_URL', 'http://aws.example.org'],
  ])('%s=%s is refused, naming it, in production and out of it', (name, url) => {
    expect(problemsOf({ [name]: url })).toEqual([`${name}: ${HTTPS_ONLY}; ${AWS_WHY}`]);
    expect(problemsOf({ [name]: url, NODE_ENV: 'development' })).toEqual([
      `${name}: ${HTTPS_ONLY}; ${AWS_WHY}`,
    ]);
  });

  it('an endpoint_url in the shared config file, naming the file and profile', () => {
    const config = join(dir, 'aws-config');
    writeFileSync(config, '[profile ops]\nendpoint_url = http://sts.example.org\n');
    expect(problemsOf({ AWS_CONFIG_FILE: config, AWS_PROFILE: 'ops' })).toEqual([
      `AWS_CONFIG_FILE (${config}), profile ops: endpoint_url: ${HTTPS_ONLY}; ${AWS_WHY}`,
    ]);
  });

  it('is given to the client, and shown as its hop: a variable over the regional endpoint', () => {
    const config = load({ AWS_ENDPOINT_URL_STS: 'http://127.0.0.1:4566' });
    expect(config.awsEndpoints).toEqual({
      STS: { url: 'http://127.0.0.1:4566', from: 'AWS_ENDPOINT_URL_STS' },
    });
    const hop = hopsOf(config, {}).find((h) => h.name === 'STS');
    expect(hop).toEqual({
      name: 'STS',
      to: '127.0.0.1:4566',
      how: 'plaintext, on loopback (never leaves this host); set by AWS_ENDPOINT_URL_STS',
    });
    // STS_ENDPOINT, the service's own, wins: the SDK never overrides an endpoint it is given.
    const own = load({
      AWS_ENDPOINT_URL_STS: 'https://env.example.org',
      STS_ENDPOINT: 'https://vpce.example.org',
    });
    expect(hopsOf(own, {}).find((h) => h.name === 'STS')?.to).toBe('vpce.example.org:443');
    expect(hopLines(hopsOf(load({}), {})).join('\n')).toMatch(
      /\n {2}STS +sts\.eu-west-2\.amazonaws\.com:443 +TLS/,
    );
  });

  it("serve's STS client calls the endpoint config check shows, whatever the process's own AWS variables say", async () => {
    const sts = new FakeSts();
    const url = await sts.start();
    const saved = { ...process.env };
    // What the SDK itself would read: a different endpoint, and the credentials to sign with.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_STS: 'https://elsewhere.example.org',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
    });
    const issuer = await createCredentialsIssuer(load({ AWS_ENDPOINT_URL_STS: url, STS_TIMEOUT_MS: '2000' }));
    try {
      await issuer.issue({
        clientId: 'client-a',
        roleArn: 'arn:aws:iam::000000000000:role/client-a-reader',
        queueArn: 'arn:aws:sqs:eu-west-2:000000000000:client-a-queue',
        sessionName: 'client-a@5f2b8c1e-0d7a-4f7e-9c1a-2b3c4d5e6f70',
        sessionPolicy: '{}',
        durationSeconds: 900,
      });
      expect(sts.calls).toHaveLength(1);
    } finally {
      issuer.close?.();
      for (const name of ['AWS_ENDPOINT_URL_STS', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
        delete process.env[name];
      Object.assign(process.env, saved);
      await sts.stop();
    }
  });

  it('AWS Private CA: its own variable, for serve and for certs sign alike', () => {
    const pca = {
      CLIENT_CERT_ISSUER: 'acm-pca',
      ACM_PCA_ARN: 'arn:aws:acm-pca:eu-west-2:000000000000:certificate-authority/x',
      AWS_ENDPOINT_URL_ACM_PCA: 'http://pca.example.org',
    };
    const refusal = `AWS_ENDPOINT_URL_ACM_PCA: ${HTTPS_ONLY}; ${AWS_WHY}`;
    expect(problemsOf(pca)).toEqual([refusal]);
    expect(() => loadIssuerConfig({ ...PRODUCTION, ...pca }, 'certs sign')).toThrow(refusal);
    const local = { ...pca, AWS_ENDPOINT_URL_ACM_PCA: 'http://localhost:4566' };
    expect(loadIssuerConfig({ ...PRODUCTION, ...local }, 'certs sign').awsEndpoints['ACM PCA']?.url).toBe(
      'http://localhost:4566',
    );
    expect(hopsOf(load(local), {}).find((h) => h.name === 'ACM_PCA')?.how).toMatch(
      /set by AWS_ENDPOINT_URL_ACM_PCA$/,
    );
  });

  it('is not read when no AWS client is in use', () => {
    expect(
      problemsOf({
        CREDENTIALS_ISSUER: 'local',
        NODE_ENV: 'development',
        AWS_ENDPOINT_URL: 'http://x.example.org',
      }),
    ).toEqual([]);
  });
});

describe('NODE_TLS_REJECT_UNAUTHORIZED', () => {
  it('0 is refused in production, naming it; any value but 1 too', () => {
    expect(problemsOf({ NODE_TLS_REJECT_UNAUTHORIZED: '0' })).toEqual([
      expect.stringMatching(
        /^NODE_TLS_REJECT_UNAUTHORIZED: 0 turns off the check of every server certificate/,
      ),
    ]);
    expect(problemsOf({ NODE_TLS_REJECT_UNAUTHORIZED: 'false' })).toEqual([
      expect.stringMatching(/^NODE_TLS_REJECT_UNAUTHORIZED: expected 1 or unset/),
    ]);
    expect(problemsOf({ NODE_TLS_REJECT_UNAUTHORIZED: '1' })).toEqual([]);
    expect(problemsOf({ NODE_TLS_REJECT_UNAUTHORIZED: '0', NODE_ENV: 'development' })).toEqual([]);
  });
});

describe('NODE_OPTIONS', () => {
  it('a flag that weakens every connection (TLS keys written out, old TLS, a lenient parser) is refused in production, naming it', () => {
    expect(
      problemsOf({ NODE_OPTIONS: '--max-old-space-size=512 --tls-keylog=/tmp/keys --insecure-http-parser' }),
    ).toEqual([
      expect.stringMatching(/^NODE_OPTIONS: --tls-keylog, --insecure-http-parser weakens every connection/),
    ]);
    expect(problemsOf({ NODE_OPTIONS: '--tls-min-v1.0' })).toEqual([
      expect.stringMatching(/^NODE_OPTIONS: --tls-min-v1\.0 /),
    ]);
    expect(problemsOf({ NODE_OPTIONS: '--max-semi-space-size=64 --enable-source-maps' })).toEqual([]);
    expect(problemsOf({ NODE_OPTIONS: '--tls-keylog=/tmp/keys', NODE_ENV: 'development' })).toEqual([]);
  });
});

describe('NODE_ENV, trimmed and case-blind', () => {
  const localCa = {
    CLIENT_CERT_ISSUER: 'local',
    CLIENT_CA_CERT: '/etc/ca.pem',
    CLIENT_CA_KEY: '/etc/ca-key.pem',
  };

  it.each(['production\n', 'Production', ' production', 'PRODUCTION', '\tproduction \r\n'])(
    '%j is production',
    (mode) => {
      expect(problemsOf({ ...localCa, NODE_ENV: mode })).toEqual([
        expect.stringMatching(/^CLIENT_CERT_ISSUER: local keeps the client CA's private key/),
      ]);
      expect(load({ NODE_ENV: mode }).NODE_ENV).toBe('production');
    },
  );

  it.each(['prod', 'staging', 'production-eu', ' ', 'développement'])(
    '%j is refused, naming NODE_ENV',
    (mode) => {
      expect(problemsOf({ ...localCa, NODE_ENV: mode })).toEqual([
        'NODE_ENV: expected production, development, test or unset (read trimmed, in any case); a value that is none of them is refused, not taken for development',
      ]);
    },
  );

  it.each(['development', 'Test', ''])('%j is not production', (mode) => {
    expect(problemsOf({ ...localCa, NODE_ENV: mode })).toEqual([]);
  });
});

describe('the OTLP headers travel only over https off loopback', () => {
  const otlp = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s3cret' };

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example.org:4318' },
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    ],
    [
      {
        OTEL_EXPORTER_OTLP_HEADERS: '',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=s3cret',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector.example.org/v1/traces',
      },
      'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    ],
  ])('%j refused, naming the headers and the endpoint', (env, headers, endpoint) => {
    const problems = problemsOf({ ...otlp, ...env });
    expect(problems).toEqual([
      `${headers}: sent with every export, would cross the network in plaintext to collector.example.org${endpoint === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? ':4318' : ''}; ${endpoint}: ${HTTPS_ONLY}`,
    ]);
    expect(problems.join('\n')).not.toContain('s3cret');
  });

  it('https, loopback, no headers, or no export: accepted', () => {
    expect(problemsOf({ ...otlp, OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.org' })).toEqual([]);
    expect(problemsOf({ ...otlp, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual([]);
    expect(
      problemsOf({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example.org',
      }),
    ).toEqual([]);
    expect(
      problemsOf({
        ...otlp,
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example.org',
      }),
    ).toEqual([]);
  });

  it("the OpenTelemetry SDK's own TLS files are refused while exporting: its exporter would not use them", () => {
    expect(
      problemsOf({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_CERTIFICATE: '/etc/ca.pem' }),
    ).toEqual([expect.stringMatching(/^OTEL_EXPORTER_OTLP_CERTIFICATE: not supported/)]);
    expect(problemsOf({ OTEL_EXPORTER_OTLP_CERTIFICATE: '/etc/ca.pem' })).toEqual([]);
  });
});

describe('through the built CLI', () => {
  let pki: TestPki;
  let env: Record<string, string>;

  beforeAll(async () => {
    pki = await makeTestPki();
    env = {
      ...HOME,
      NODE_ENV: 'production',
      TLS_CERT: pki.write('server.pem', pki.server.certPem),
      TLS_KEY: pki.write('server-key.pem', pki.server.keyPem),
      TLS_CLIENT_CA: pki.write('ca.pem', pki.ca.certPem),
      BEARER_MODE: 'off',
      ACCESS_STORE: `sqlite:${join(dir, 'access.db')}`,
      CASE_STORE: `sqlite:${join(dir, 'cases.db')}`,
      AUDIT_STORE: `sqlite:${join(dir, 'audit.db')}`,
    };
  });
  afterAll(() => pki.cleanup());

  it('config check refuses AWS_ENDPOINT_URL_STS=http://sts.example.org in production, naming it', async () => {
    const result = await runCliInProcess(['config', 'check'], {
      ...env,
      AWS_ENDPOINT_URL_STS: 'http://sts.example.org',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`AWS_ENDPOINT_URL_STS: ${HTTPS_ONLY}`);
  });

  it("config check refuses a shared config file's endpoint_url, naming the file and profile", async () => {
    const config = join(dir, 'cli-aws-config');
    writeFileSync(config, '[default]\nsts =\n  x = 1\nendpoint_url = http://sts.example.org\n');
    const result = await runCliInProcess(['config', 'check'], { ...env, AWS_CONFIG_FILE: config });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `AWS_CONFIG_FILE (${config}), profile default: endpoint_url: ${HTTPS_ONLY}`,
    );
  });

  it('config check takes a loopback endpoint and shows it as the STS hop', async () => {
    const result = await runCliInProcess(['config', 'check'], {
      ...env,
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /\n {2}STS +127\.0\.0\.1:4566 +plaintext, on loopback \(never leaves this host\); set by AWS_ENDPOINT_URL\n/,
    );
  });

  it('config check and serve refuse NODE_TLS_REJECT_UNAUTHORIZED=0 in production, naming it', async () => {
    const refused = { ...env, NODE_TLS_REJECT_UNAUTHORIZED: '0' };
    const check = await runCliInProcess(['config', 'check'], refused);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('NODE_TLS_REJECT_UNAUTHORIZED: 0 turns off');
    const serve = runCli(['serve'], { ...refused, HOST: '127.0.0.1', PORT: '0', MANAGEMENT_PORT: '0' });
    expect(serve.status).toBe(1);
    expect(serve.stderr).toContain('NODE_TLS_REJECT_UNAUTHORIZED: 0 turns off');
  });

  it.each(['production\n', 'Production', ' production', 'PRODUCTION'])(
    'NODE_ENV=%j: config check refuses CLIENT_CERT_ISSUER=local, and clients list a plaintext store',
    async (mode) => {
      const local = {
        ...env,
        NODE_ENV: mode,
        CLIENT_CERT_ISSUER: 'local',
        CLIENT_CA_CERT: pki.write('client-ca.pem', pki.ca.certPem),
        CLIENT_CA_KEY: pki.write('client-ca-key.pem', pki.ca.keyPem),
      };
      const check = await runCliInProcess(['config', 'check'], local);
      expect(check.status).toBe(1);
      expect(check.stderr).toContain("CLIENT_CERT_ISSUER: local keeps the client CA's private key");
      const list = await runCliInProcess(['clients', 'list'], {
        ...env,
        NODE_ENV: mode,
        ACCESS_STORE: 'postgres://svc@db.internal:5432/x',
      });
      expect(list.stderr).toMatch(
        /ACCESS_STORE: db\.internal:5432 is reached plaintext, which NODE_ENV=production refuses/,
      );
    },
  );

  it.each(['prod', 'staging'])(
    'NODE_ENV=%s: refused by config check and by a command that opens a store',
    async (mode) => {
      for (const args of [
        ['config', 'check'],
        ['clients', 'list'],
      ]) {
        const result = await runCliInProcess(args, { ...env, NODE_ENV: mode });
        expect(result.status).not.toBe(0);
        expect(result.stderr).toContain('NODE_ENV: expected production, development, test or unset');
      }
    },
  );

  it('config check refuses OTLP headers to http://collector.example.org', async () => {
    const result = await runCliInProcess(['config', 'check'], {
      ...env,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example.org',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s3cret',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_HEADERS: sent with every export');
    expect(result.stderr).not.toContain('s3cret');
  });

  it('clients add refuses an --obo-jwks that is not https, naming it, before anything is stored', async () => {
    const add = (jwks: string) =>
      runCliInProcess(
        [
          'clients',
          'add',
          'obo-client',
          '--permissions',
          'getCase',
          '--obo',
          'required',
          '--obo-issuer',
          'https://idp.example.org',
          '--obo-audience',
          'case-read',
          '--obo-jwks',
          jwks,
        ],
        { ...env, NODE_ENV: 'development' },
      );
    for (const jwks of [
      'http://idp.example.org/jwks',
      'HTTP://idp.example.org/jwks',
      'file:///etc/jwks.json',
      'https://',
    ]) {
      const result = await add(jwks);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('--obo-jwks: expected a file path or an https:// URL');
    }
    const list = await runCliInProcess(['clients', 'list'], { ...env, NODE_ENV: 'development' });
    expect(list.stdout).not.toContain('obo-client');
    expect((await add('https://idp.example.org/jwks')).status).toBe(0);
  });
});
