import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACMPCAClient, GetCertificateAuthorityCertificateCommand } from '@aws-sdk/client-acm-pca';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { loadSharedConfigFiles as loadSharedConfigFilesOfSts } from '@smithy/core/config';
import { loadSharedConfigFiles as loadSharedConfigFilesOfAcmPca } from '@smithy/shared-ini-file-loader';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  AWS_ACM_PCA,
  AWS_STS,
  type AwsService,
  awsEndpointsOf,
} from '../../../src/adapters/shared/aws-endpoints.js';
import { configFileSections, parseAwsIni } from '../../../src/adapters/shared/aws-shared-config.js';

/**
 * The AWS SDK's endpoint settings as the service reads them (decisions §20): the refusals,
 * and, against the real clients the service runs (`@aws-sdk/client-sts` on `@smithy/core`,
 * `@aws-sdk/client-acm-pca` 3.523 on `@smithy/middleware-endpoint` 2.5), that the endpoint the
 * service finds is the one the client, left to itself, would call.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-aws-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let written = 0;

/** Writes `text` to a file of its own (the SDKs cache a file by its path) and returns the path. */
function file(text: string): string {
  written += 1;
  const path = join(dir, `file-${written}`);
  writeFileSync(path, text);
  return path;
}

/** The environment with a config file and a credentials file, none missing by accident. */
const withFiles = (config: string, credentials = '', env: Record<string, string> = {}) => ({
  HOME: dir,
  AWS_CONFIG_FILE: file(config),
  AWS_SHARED_CREDENTIALS_FILE: file(credentials),
  ...env,
});

const endpointOf = (env: Record<string, string>, service: AwsService) => {
  const found = awsEndpointsOf(env, [service]);
  expect(found.problems).toEqual([]);
  return found.endpoints[service.id];
};

describe('the endpoint an AWS client is given', () => {
  it('is the service variable, then AWS_ENDPOINT_URL_<SERVICE>, then AWS_ENDPOINT_URL, then the config file', () => {
    const files = withFiles('[default]\nendpoint_url = https://from-file.example.org\n');
    expect(endpointOf(files, AWS_STS)).toEqual({
      url: 'https://from-file.example.org',
      from: `AWS_CONFIG_FILE (${files.AWS_CONFIG_FILE}), profile default: endpoint_url`,
    });
    const all = { ...files, AWS_ENDPOINT_URL: 'https://all.example.org' };
    expect(endpointOf(all, AWS_STS)).toEqual({ url: 'https://all.example.org', from: 'AWS_ENDPOINT_URL' });
    const sts = { ...all, AWS_ENDPOINT_URL_STS: 'https://sts.example.org' };
    expect(endpointOf(sts, AWS_STS)).toEqual({
      url: 'https://sts.example.org',
      from: 'AWS_ENDPOINT_URL_STS',
    });
    // AWS_ENDPOINT_URL_STS is STS's alone.
    expect(endpointOf(sts, AWS_ACM_PCA)?.from).toBe('AWS_ENDPOINT_URL');
    const own = { ...sts, STS_ENDPOINT: 'https://vpce.example.org' };
    expect(endpointOf(own, AWS_STS)).toEqual({ url: 'https://vpce.example.org', from: 'STS_ENDPOINT' });
  });

  it('is none (the regional one) when nothing names one, and nothing is read when no AWS client is used', () => {
    expect(endpointOf(withFiles(''), AWS_STS)).toBeUndefined();
    const broken = { AWS_CONFIG_FILE: dir, AWS_ENDPOINT_URL: 'http://x.example.org' };
    expect(awsEndpointsOf(broken, [])).toEqual({ endpoints: {}, problems: [] });
  });

  it('takes a [services NAME] section before the profile, and AWS_PROFILE names the profile', () => {
    const config = [
      '[default]',
      'endpoint_url = https://default.example.org',
      '[profile dev]',
      'services = local',
      'endpoint_url = https://dev.example.org',
      '[services local]',
      'sts =',
      '  endpoint_url = https://sts.local.example.org',
    ].join('\n');
    const env = withFiles(config, '', { AWS_PROFILE: 'dev' });
    expect(endpointOf(env, AWS_STS)?.url).toBe('https://sts.local.example.org');
    expect(endpointOf(env, AWS_STS)?.from).toMatch(/\[services local\]: sts\.endpoint_url$/);
    expect(endpointOf(env, AWS_ACM_PCA)?.url).toBe('https://dev.example.org');
    expect(endpointOf({ ...env, AWS_PROFILE: '' }, AWS_STS)?.url).toBe('https://default.example.org');
  });
});

describe('the SDK settings refused, each named', () => {
  const problems = (env: Record<string, string>, services = [AWS_STS]) =>
    awsEndpointsOf({ HOME: dir, AWS_CONFIG_FILE: join(dir, 'none'), ...env }, services).problems;

  it.each([
    ['AWS_ENDPOINT_URL_STS', 'http://sts.example.org'],
    ['AWS_ENDPOINT_URL', 'http://10.0.0.7:4566'],
    ['AWS_ENDPOINT_URL_ACM_PCA', 'http://pca.example.org'],
    // Read by the SDK's own credential providers (SSO), so held to the rule too.
    ['AWS_ENDPOINT_URL_SSO', 'http://sso.example.org'],
    ['AWS_ENDPOINT_URL_STS', 'sts.example.org'],
  ])('%s=%s', (name, value) => {
    expect(problems({ [name]: value })).toEqual([
      `${name}: expected an https:// URL (http:// only to a loopback host: 127.0.0.1, ::1, localhost); the AWS SDK sends signed requests there, and credentials come back on it`,
    ]);
  });

  it('accepts https and loopback http', () => {
    expect(
      problems({
        AWS_ENDPOINT_URL_STS: 'http://127.0.0.1:4566',
        AWS_ENDPOINT_URL: 'https://vpce.example.org',
        AWS_ENDPOINT_URL_ACM_PCA: 'http://localhost:4566',
      }),
    ).toEqual([]);
  });

  it('an insecure endpoint_url in the profile or its services section, naming the file, profile and key', () => {
    const env = withFiles(
      '[default]\nendpoint_url = http://aws.example.org\nservices = s\n[services s]\nsso =\n  endpoint_url = http://sso.example.org\n',
    );
    expect(problems(env)).toEqual([
      `AWS_CONFIG_FILE (${env.AWS_CONFIG_FILE}), profile default: endpoint_url: expected an https:// URL (http:// only to a loopback host: 127.0.0.1, ::1, localhost); the AWS SDK sends signed requests there, and credentials come back on it`,
      `AWS_CONFIG_FILE (${env.AWS_CONFIG_FILE}), [services s]: sso.endpoint_url: expected an https:// URL (http:// only to a loopback host: 127.0.0.1, ::1, localhost); the AWS SDK sends signed requests there, and credentials come back on it`,
    ]);
    const credentials = withFiles('', '[default]\nendpoint_url = http://aws.example.org\n');
    expect(problems(credentials)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^AWS_SHARED_CREDENTIALS_FILE \\(${credentials.AWS_SHARED_CREDENTIALS_FILE}\\), profile default: endpoint_url: expected an https`,
        ),
      ),
    ]);
  });

  it('what the SDK would read otherwise than written: a missing services section, a non-boolean, a file it cannot read', () => {
    const env = withFiles('[default]\nservices = gone\nendpoint_url = https://x.example.org\n');
    expect(problems(env)).toEqual([
      `AWS_CONFIG_FILE (${env.AWS_CONFIG_FILE}), profile default: services: names no [services gone] section in AWS_CONFIG_FILE (${env.AWS_CONFIG_FILE}) (the AWS SDK would then pass over the profile's endpoint settings)`,
    ]);
    expect(problems({ AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'yes' })).toEqual([
      'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: expected true or false (the AWS SDK takes any other value for unset)',
    ]);
    expect(problems(withFiles('[default]\nignore_configured_endpoint_urls = 1\n'))).toEqual([
      expect.stringMatching(/profile default: ignore_configured_endpoint_urls: expected true or false$/),
    ]);
    // A FIFO is refused at once, never waited on (the SDK would wait for a writer at its first call).
    const fifo = join(dir, 'a-fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(problems({ AWS_CONFIG_FILE: fifo })).toEqual([
      `AWS_CONFIG_FILE: ${fifo} is not a regular file (a FIFO)`,
    ]);
    expect(problems({ AWS_SHARED_CREDENTIALS_FILE: dir })).toEqual([
      expect.stringMatching(
        new RegExp(`^AWS_SHARED_CREDENTIALS_FILE: ${dir} (is not a regular file|cannot be read)`),
      ),
    ]);
    expect(problems(withFiles('[profile __proto__]\n'))).toEqual([
      expect.stringMatching(/^AWS_CONFIG_FILE \(.*\): it has a section named __proto__$/),
    ]);
    // The home directory's files, when no variable names them.
    const home = mkdtempSync(join(dir, 'home-'));
    mkdirSync(join(home, '.aws'));
    writeFileSync(join(home, '.aws', 'config'), '[default]\nendpoint_url = http://aws.example.org\n');
    expect(
      awsEndpointsOf({ HOME: home }, [AWS_STS]).problems[0]?.startsWith(
        `${join(home, '.aws', 'config')}, profile default: endpoint_url: expected an https`,
      ),
    ).toBe(true);
  });
});

describe('the shared files, parsed as the SDK parses them', () => {
  const texts = [
    '[default]\nregion = eu-west-2\nendpoint_url = https://a.example.org ; a comment\n',
    '[default]\nendpoint_url=https://a.example.org#not-a-comment\n[profile default]\nendpoint_url = https://b.example.org\n',
    '# comment\n[profile dev]\nservices = s\n[services s]\nsts =\n  endpoint_url = https://s.example.org\n  other = 1\nacm_pca =\n\tendpoint_url = https://p.example.org\nplain = 2\n',
    '[sso-session x]\nsso_region = eu-west-2\n[unknown thing]\nkey = v\n[plain]\nkey = v\n[profile "quoted"]\nendpoint_url = https://q.example.org\n',
    '[default]\r\nkey = a = b\r\n= no key\r\nno equals\r\n[default]\r\nmore = c\r\n',
    '[profile.dotted]\nk = v\n[profile x]\nsts =\nendpoint_url = https://not-sub.example.org\n',
  ];

  it.each(texts.map((text) => [text]))('%j', async (text) => {
    const config = file(text);
    const credentials = file(text);
    const init = { configFilepath: config, filepath: credentials, ignoreCache: true };
    const mine = {
      configFile: { ...configFileSections(parseAwsIni(text)) },
      credentialsFile: { ...parseAwsIni(text) },
    };
    const plain = (files: object) => JSON.parse(JSON.stringify(files));
    expect(plain(mine)).toEqual(plain(await loadSharedConfigFilesOfSts(init)));
    expect(plain(mine)).toEqual(plain(await loadSharedConfigFilesOfAcmPca(init)));
  });
});

/**
 * The endpoint a real client, given no endpoint of its own, sends its first call to: the
 * request is taken at the handler, never sent. The SDK reads `process.env`, so each case sets
 * it and puts it back.
 */
async function calledBy(service: AwsService, env: Record<string, string>): Promise<string> {
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) if (/^AWS_/.test(name)) delete process.env[name];
  Object.assign(process.env, env);
  let url = '';
  const requestHandler = {
    handle: async (request: { protocol: string; hostname: string; port?: number }) => {
      url = `${request.protocol}//${request.hostname}${request.port ? `:${request.port}` : ''}`;
      throw Object.assign(new Error('taken, not sent'), { name: 'Taken' });
    },
    updateHttpClientConfig: () => {},
    httpHandlerConfigs: () => ({}),
  };
  const config = {
    region: 'eu-west-2',
    maxAttempts: 1,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    requestHandler,
  };
  try {
    if (service === AWS_STS) {
      const client = new STSClient(config);
      await client.send(new GetCallerIdentityCommand({})).catch(() => undefined);
      client.destroy();
    } else {
      const client = new ACMPCAClient(config);
      const arn = 'arn:aws:acm-pca:eu-west-2:000000000000:certificate-authority/x';
      await client
        .send(new GetCertificateAuthorityCertificateCommand({ CertificateAuthorityArn: arn }))
        .catch(() => undefined);
      client.destroy();
    }
  } finally {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  }
  return url;
}

describe('what is found is what the real client would call', () => {
  afterEach(() => {
    expect(
      Object.keys(process.env).filter((name) => /^AWS_(ENDPOINT|IGNORE|CONFIG|PROFILE)/.test(name)),
    ).toEqual([]);
  });

  const regional = (service: AwsService) =>
    `https://${service === AWS_STS ? 'sts' : 'acm-pca'}.eu-west-2.amazonaws.com`;
  const cases: [string, () => Record<string, string>][] = [
    ['nothing set', () => withFiles('')],
    ['AWS_ENDPOINT_URL_STS', () => withFiles('', '', { AWS_ENDPOINT_URL_STS: 'https://sts.example.org' })],
    [
      'AWS_ENDPOINT_URL_ACM_PCA',
      () => withFiles('', '', { AWS_ENDPOINT_URL_ACM_PCA: 'https://pca.example.org:8443' }),
    ],
    ['AWS_ENDPOINT_URL', () => withFiles('', '', { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' })],
    [
      'both variables',
      () =>
        withFiles('', '', {
          AWS_ENDPOINT_URL: 'https://all.example.org',
          AWS_ENDPOINT_URL_STS: 'https://sts.example.org',
          AWS_ENDPOINT_URL_ACM_PCA: 'https://pca.example.org',
        }),
    ],
    ['the profile', () => withFiles('[default]\nendpoint_url = https://file.example.org\n')],
    [
      'a variable over the file',
      () =>
        withFiles('[default]\nendpoint_url = https://file.example.org\n', '', {
          AWS_ENDPOINT_URL: 'https://env.example.org',
        }),
    ],
    [
      'AWS_PROFILE, and [profile default] over [default]',
      () =>
        withFiles(
          '[default]\nendpoint_url = https://a.example.org\n[profile default]\nendpoint_url = https://b.example.org\n[profile dev]\nendpoint_url = https://dev.example.org\n',
          '',
          { AWS_PROFILE: 'dev' },
        ),
    ],
    [
      '[profile default] over [default]',
      () =>
        withFiles(
          '[default]\nendpoint_url = https://a.example.org\n[profile default]\nendpoint_url = https://b.example.org\n',
        ),
    ],
    [
      'a services section',
      () =>
        withFiles(
          '[default]\nservices = s\nendpoint_url = https://profile.example.org\n[services s]\nsts =\n  endpoint_url = https://sts.s.example.org\nacm_pca =\n  endpoint_url = https://pca.s.example.org\n',
        ),
    ],
    ['the credentials file', () => withFiles('', '[default]\nendpoint_url = https://creds.example.org\n')],
    [
      'the config file over the credentials file',
      () =>
        withFiles(
          '[default]\nendpoint_url = https://config.example.org\n',
          '[default]\nendpoint_url = https://creds.example.org\n',
        ),
    ],
    [
      'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true',
      () =>
        withFiles('[default]\nendpoint_url = https://file.example.org\n', '', {
          AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true',
          AWS_ENDPOINT_URL: 'https://env.example.org',
        }),
    ],
    [
      'ignore_configured_endpoint_urls = true in the profile',
      () =>
        withFiles(
          '[default]\nignore_configured_endpoint_urls = true\nendpoint_url = https://file.example.org\n',
        ),
    ],
    [
      'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=false over the profile',
      () =>
        withFiles(
          '[default]\nignore_configured_endpoint_urls = true\nendpoint_url = https://file.example.org\n',
          '',
          {
            AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'false',
          },
        ),
    ],
  ];

  for (const service of [AWS_STS, AWS_ACM_PCA]) {
    it.each(cases)(`${service.id}: %s`, async (_, make) => {
      const env = make();
      const found = endpointOf(env, service);
      const called = await calledBy(service, env);
      expect(called).toBe(found === undefined ? regional(service) : new URL(found.url).origin);
    });
  }
});
