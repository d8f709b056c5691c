import { describe, expect, it } from 'vitest';
import {
  type Config,
  ConfigError,
  loadConfig as loadConfigWith,
} from '../../../src/app/composition/config.js';
import { STORE_REGISTRY } from '../../../src/app/composition/store-kinds.js';
import type { Environment, StoreRole } from '../../../src/ports/stores.js';

const loadConfig = (env: Environment): Config => loadConfigWith(env, STORE_REGISTRY);

/** The forms a role accepts, as the registry says them (so a new store kind changes no test here). */
const formsOf = (role: StoreRole) => STORE_REGISTRY.formsFor(role).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The variables that have no default: TLS files and the bearer token settings. */
const BASE = {
  TLS_CERT: '/etc/case-read/server.pem',
  TLS_KEY: '/etc/case-read/server-key.pem',
  TLS_CLIENT_CA: '/etc/case-read/clients-ca.pem',
  BEARER_JWKS: '/etc/case-read/jwks.json',
  BEARER_ISSUER: 'https://issuer.example',
  BEARER_AUDIENCE: 'case-read-service',
};

function problemsOf(env: Record<string, string>, base: Record<string, string> = BASE): readonly string[] {
  try {
    loadConfig({ ...base, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig(BASE);
    expect(config.IDENTITY_MODE).toBe('tls');
    expect(config.BEARER_MODE).toBe('required');
    expect(config.ACCESS_STORE).toMatchObject({ url: 'sqlite:./data/access.db', role: 'access' });
    expect(config.TLS_CRL).toBeUndefined();
    expect(config.CREDENTIALS_ISSUER).toBe('sts');
    // Longer than the 60 s idle timeout of an AWS load balancer and of nginx's upstream keep-alive.
    expect(config.KEEP_ALIVE_TIMEOUT_MS).toBe(65_000);
    expect(loadConfig({ ...BASE, KEEP_ALIVE_TIMEOUT_MS: '620000' }).KEEP_ALIVE_TIMEOUT_MS).toBe(620_000);
    expect(config.RATE_LIMIT_STORE).toMatchObject({ url: 'memory', role: 'rateLimit' });
    const kindSettings = STORE_REGISTRY.readSettings(BASE).byKind;
    expect(kindSettings.get('redis')).toStrictEqual({
      prefix: 'case-read:',
      timeoutMs: 50,
      onStoreFailure: 'local',
    });
    expect(kindSettings.get('upstream')).toStrictEqual({
      connections: 16,
      timeoutMs: 2000,
      retries: 2,
      timeZone: 'Europe/London',
      maxBodyBytes: 1_048_576,
    });
    // http:// only to this host: a sidecar proxy in the pod, a test's stand-in.
    for (const local of [
      'http://127.0.0.1:8080',
      'http://127.1.2.3',
      'http://[::1]:8080/api',
      'http://localhost:9',
    ]) {
      expect(loadConfig({ ...BASE, CASE_STORE: local }).CASE_STORE.kind, local).toBe('upstream');
      expect(loadConfig({ ...BASE, STS_ENDPOINT: local }).STS_ENDPOINT, local).toBe(local);
    }
    expect(
      loadConfig({ ...BASE, ACM_PCA_ENDPOINT: 'https://acm-pca.eu-west-2.amazonaws.com' }).ACM_PCA_ENDPOINT,
    ).toBe('https://acm-pca.eu-west-2.amazonaws.com');
    expect(loadConfig({ ...BASE, CASE_STORE: 'https://records.internal:8443/api' }).CASE_STORE).toStrictEqual(
      {
        role: 'cases',
        kind: 'upstream',
        url: 'https://records.internal:8443/api',
        settings: {
          connections: 16,
          timeoutMs: 2000,
          retries: 2,
          timeZone: 'Europe/London',
          maxBodyBytes: 1_048_576,
        },
      },
    );
    expect(config.AUDIT_STORE).toMatchObject({ url: 'sqlite:./data/audit.db', role: 'audit' });
    expect(config.RATE_LIMIT_DEFAULT).toEqual({ limit: 100, windowMs: 1000 });
    expect(config.STS_REGION).toBe('eu-west-2');
    expect(config.STS_DURATION_SECONDS).toBe(3600);
    expect(config.STS_ROLE_ARN).toBeUndefined();
    expect(config.SHUTDOWN_GRACE_MS).toBe(10_000);
    expect(config.TRUSTED_GATEWAYS).toBeUndefined();
    expect(
      loadConfig({ ...BASE, IDENTITY_MODE: 'trusted-header', TRUSTED_GATEWAYS: 'gw-1, gw-2,gw-1' })
        .TRUSTED_GATEWAYS,
    ).toStrictEqual(['gw-1', 'gw-2']);
    expect(
      loadConfig({ ...BASE, CREDENTIALS_ISSUER: 'local', NODE_ENV: 'development' }).CREDENTIALS_ISSUER,
    ).toBe('local');
    expect(config.HOST).toBe('127.0.0.1');
    expect(config.PORT).toBe(8443);
    expect(config.CASE_STORE).toMatchObject({ url: 'sqlite:./data/cases.db', role: 'cases' });
    expect(config.CRN_PATTERN.pattern).toBe('^[A-Z][0-9]{6}$');
    expect(config.LOG_LEVEL).toBe('info');
  });

  it('reads each variable', () => {
    const config = loadConfig({
      ...BASE,
      HOST: '::1',
      PORT: '0',
      CASE_STORE: 'memory',
      CRN_PATTERN: '^[A-Z]{2}[0-9]{4}$',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({ HOST: '::1', PORT: 0, CASE_STORE: { url: 'memory' }, LOG_LEVEL: 'warn' });
    expect(config.CRN_PATTERN.accepts('AB1234')).toBe(true);
    expect(loadConfig({ ...BASE, CASE_STORE: 'sqlite:/tmp/x.db' }).CASE_STORE).toMatchObject({
      kind: 'sqlite',
      url: 'sqlite:/tmp/x.db',
    });
    expect(
      loadConfig({
        ...BASE,
        RATE_LIMIT_STORE: 'redis://cache:6379',
        RATE_LIMIT_PREFIX: 'p:',
        RATE_LIMIT_TIMEOUT_MS: '75',
      }).RATE_LIMIT_STORE.settings,
    ).toStrictEqual({ prefix: 'p:', timeoutMs: 75, onStoreFailure: 'local' });
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ ...BASE, PORT: '', CASE_STORE: '' }).PORT).toBe(8443);
  });

  it.each([
    [{ PORT: 'eighty' }, /^PORT: PORT must be a port number 0\.\.65535$/],
    [{ PORT: '70000' }, /^PORT: /],
    [{ PORT: '-1' }, /^PORT: /],
    [{ CASE_STORE: 'mongodb://x' }, new RegExp(`^CASE_STORE: expected ${formsOf('cases')}$`)],
    [{ CASE_STORE: 'sqlite:' }, /^CASE_STORE: sqlite: needs the path of a file, e.g. sqlite:/],
    [{ CRN_PATTERN: '[A-Z]+' }, /^CRN_PATTERN: crn pattern must be anchored/],
    [{ CRN_PATTERN: '^(.*$' }, /^CRN_PATTERN: crn pattern is not a valid regular expression/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent$/],
    [{ IDENTITY_MODE: 'header' }, /^IDENTITY_MODE: expected tls or trusted-header$/],
    [
      { IDENTITY_MODE: 'trusted-header' },
      /^TRUSTED_GATEWAYS: required when IDENTITY_MODE=trusted-header: the CNs of the gateways/,
    ],
    [
      { IDENTITY_MODE: 'trusted-header', TRUSTED_GATEWAYS: 'gw-1,,gw-2' },
      /^TRUSTED_GATEWAYS: expected comma-separated certificate CNs/,
    ],
    [
      { SHUTDOWN_GRACE_MS: 'soon' },
      /^SHUTDOWN_GRACE_MS: SHUTDOWN_GRACE_MS must be a whole number 0\.\.600000$/,
    ],
    [{ BEARER_MODE: 'maybe' }, /^BEARER_MODE: expected required, optional or off$/],
    [{ BEARER_JWKS: 'http://idp.example/jwks' }, /^BEARER_JWKS: expected a file path or an https:\/\/ URL$/],
    [{ ACCESS_STORE: 'postgres://db' }, /^ACCESS_STORE: postgres:\/\/ needs a database/],
    [
      { ACCESS_STORE: 'redis://x' },
      new RegExp(`^ACCESS_STORE: redis cannot hold an access store; expected ${formsOf('access')}$`),
    ],
    [{ CREDENTIALS_ISSUER: 'vault' }, /^CREDENTIALS_ISSUER: expected sts or local$/],
    [{ AUDIT_STORE: 'jsonl:' }, /^AUDIT_STORE: jsonl: needs the path of a file/],
    [{ AUDIT_STORE: 'file:/var/log/audit' }, new RegExp(`^AUDIT_STORE: expected ${formsOf('audit')}$`)],
    [
      { AUDIT_STORE: 'memory' },
      new RegExp(`^AUDIT_STORE: memory cannot hold an audit store; expected ${formsOf('audit')}$`),
    ],
    [{ AUDIT_STORE: 'sqlite:' }, /^AUDIT_STORE: sqlite: needs the path of a file/],
    [
      { CASE_STORE: 'sqlite:/srv/case-read/' },
      /^CASE_STORE: sqlite:\/srv\/case-read\/ names a directory; sqlite: needs/,
    ],
    [{ RATE_LIMIT_DEFAULT: 'lots' }, /^RATE_LIMIT_DEFAULT: rate limit must look like N\/DURATION/],
    [{ RATE_LIMIT_STORE: 'redis://127.0.0.1:port' }, /^RATE_LIMIT_STORE: redis:\/\/ needs/],
    [{ RATE_LIMIT_STORE: 'disk' }, new RegExp(`^RATE_LIMIT_STORE: expected ${formsOf('rateLimit')}$`)],
    [
      { RATE_LIMIT_ON_STORE_FAILURE: 'retry' },
      /^RATE_LIMIT_ON_STORE_FAILURE: expected local, allow or deny$/,
    ],
    [
      { RATE_LIMIT_TIMEOUT_MS: '0' },
      /^RATE_LIMIT_TIMEOUT_MS: RATE_LIMIT_TIMEOUT_MS must be a whole number 1\.\.10000$/,
    ],
    [
      { CREDENTIALS_ISSUER: 'local', NODE_ENV: 'production' },
      /^CREDENTIALS_ISSUER: local is for development only and is refused when NODE_ENV=production/,
    ],
    [
      { STS_DURATION_SECONDS: '899' },
      /^STS_DURATION_SECONDS: STS_DURATION_SECONDS must be a whole number 900\.\.43200$/,
    ],
    [{ STS_DURATION_SECONDS: '43201' }, /^STS_DURATION_SECONDS: /],
    [{ STS_TIMEOUT_MS: '0' }, /^STS_TIMEOUT_MS: /],
    [{ STS_REGION: 'europe' }, /^STS_REGION: expected an AWS region such as eu-west-2$/],
    [{ STS_ENDPOINT: 'sts.local' }, /^STS_ENDPOINT: expected an http\(s\):\/\/ URL$/],
    [{ STS_ROLE_ARN: 'my-role' }, /^STS_ROLE_ARN: expected an IAM role ARN$/],
    // A secret or personal data never travels in plaintext off the host (decisions §17).
    [
      { STS_ENDPOINT: 'http://sts.eu-west-2.amazonaws.com' },
      /^STS_ENDPOINT: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    [
      { ACM_PCA_ENDPOINT: 'http://10.0.0.7:8080' },
      /^ACM_PCA_ENDPOINT: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    [
      {
        UPSTREAM_TOKEN_URL: 'http://idp.example/token',
        UPSTREAM_CLIENT_ID: 'svc',
        UPSTREAM_CLIENT_SECRET_FILE: '/s',
      },
      /^UPSTREAM_TOKEN_URL: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    [
      { CASE_STORE: 'http://records.internal:8080/api' },
      /^CASE_STORE: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    [
      { CASE_STORE: 'http://127.0.0.1.example.org/api' },
      /^CASE_STORE: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    [
      { CASE_STORE: 'http://sidecar.localhost:8080' },
      /^CASE_STORE: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    [
      { CASE_STORE: 'http://[::2]:8080' },
      /^CASE_STORE: expected an https:\/\/ URL \(http:\/\/ only to a loopback host: 127\.0\.0\.1, ::1, localhost\)$/,
    ],
    // A store kind's own variables are read by the kind, and reported the same way.
    [
      { UPSTREAM_TLS_CERT: '/etc/upstream.pem' },
      /^UPSTREAM_TLS_KEY: UPSTREAM_TLS_CERT and UPSTREAM_TLS_KEY go together$/,
    ],
    [
      { UPSTREAM_TOKEN_URL: 'https://idp.example/token', UPSTREAM_CLIENT_ID: 'svc' },
      /^UPSTREAM_CLIENT_SECRET_FILE: required with UPSTREAM_TOKEN_URL$/,
    ],
    [
      { UPSTREAM_TIMEOUT_MS: '10' },
      /^UPSTREAM_TIMEOUT_MS: UPSTREAM_TIMEOUT_MS must be a whole number 50\.\.60000$/,
    ],
    [
      { UPSTREAM_TOKEN_URL: 'idp', UPSTREAM_CLIENT_ID: 'svc', UPSTREAM_CLIENT_SECRET_FILE: '/run/secret' },
      /^UPSTREAM_TOKEN_URL: expected an http\(s\):\/\/ URL$/,
    ],
    [
      { UPSTREAM_TIME_ZONE: 'Europe/Londres' },
      /^UPSTREAM_TIME_ZONE: UPSTREAM_TIME_ZONE must be an IANA time zone, such as Europe\/London or UTC$/,
    ],
    [{ UPSTREAM_TIME_ZONE: '+01:00' }, /^UPSTREAM_TIME_ZONE: /],
    [{ CLIENT_CERT_ISSUER: 'vault' }, /^CLIENT_CERT_ISSUER: expected none, local or acm-pca$/],
    [
      { CLIENT_CERT_ISSUER: 'local', CLIENT_CA_KEY: '/ca-key.pem' },
      /^CLIENT_CA_CERT: required with CLIENT_CERT_ISSUER=local \(PEM file\)$/,
    ],
    [{ CLIENT_CERT_ISSUER: 'acm-pca' }, /^ACM_PCA_ARN: required with CLIENT_CERT_ISSUER=acm-pca$/],
    [
      { CLIENT_CERT_ISSUER: 'acm-pca', ACM_PCA_ARN: 'arn:aws:s3:::bucket' },
      /^ACM_PCA_ARN: expected an AWS Private CA ARN/,
    ],
    [{ CLIENT_CERT_DAYS: '398' }, /^CLIENT_CERT_DAYS: CLIENT_CERT_DAYS must be a whole number 1\.\.397$/],
    [{ CLIENT_CERT_RENEW_WITHIN_DAYS: '0' }, /^CLIENT_CERT_RENEW_WITHIN_DAYS: /],
    [
      { REQUEST_DEADLINE_MS: '50' },
      /^REQUEST_DEADLINE_MS: REQUEST_DEADLINE_MS must be a whole number 100\.\.60000$/,
    ],
    [{ MAX_IN_FLIGHT: '0' }, /^MAX_IN_FLIGHT: /],
    [
      { KEEP_ALIVE_TIMEOUT_MS: '500' },
      /^KEEP_ALIVE_TIMEOUT_MS: KEEP_ALIVE_TIMEOUT_MS must be a whole number 1000\.\.3600000$/,
    ],
    [{ KEEP_ALIVE_TIMEOUT_MS: '65s' }, /^KEEP_ALIVE_TIMEOUT_MS: /],
    [
      { UPSTREAM_MAX_BODY_BYTES: '1023' },
      /^UPSTREAM_MAX_BODY_BYTES: UPSTREAM_MAX_BODY_BYTES must be a whole number 1024\.\.67108864$/,
    ],
    [{ UPSTREAM_MAX_BODY_BYTES: '67108865' }, /^UPSTREAM_MAX_BODY_BYTES: /],
    [{ RATE_LIMIT_PREFIX: 'a b' }, /^RATE_LIMIT_PREFIX: expected 1-64 letters, digits or : \. _ -$/],
  ])('refuses %j, naming the variable', (env, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('requires the TLS files, naming each', () => {
    const problems = problemsOf({}, { BEARER_MODE: 'off' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['TLS_CERT', 'TLS_CLIENT_CA', 'TLS_KEY']);
    expect(problems.join()).toMatch(
      /TLS_CLIENT_CA: required: the path of the CA bundle trusted for client certificates/,
    );
  });

  it('requires the bearer settings unless BEARER_MODE=off', () => {
    const { BEARER_JWKS: _j, BEARER_ISSUER: _i, BEARER_AUDIENCE: _a, ...tlsOnly } = BASE;
    expect(
      problemsOf({}, tlsOnly)
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['BEARER_AUDIENCE', 'BEARER_ISSUER', 'BEARER_JWKS']);
    expect(problemsOf({ BEARER_MODE: 'optional' }, tlsOnly)).toHaveLength(3);
    expect(loadConfig({ ...tlsOnly, BEARER_MODE: 'off' }).BEARER_MODE).toBe('off');
  });

  it('names every bad variable at once', () => {
    expect(
      problemsOf({ PORT: 'x', LOG_LEVEL: 'y' })
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['LOG_LEVEL', 'PORT']);
  });

  it('never repeats a value back: a store URL may hold a password', () => {
    const problems = problemsOf({ CASE_STORE: 'postgres://svc:hunter2@db.internal/cases?schema=no;drop' });
    expect(problems.join()).toMatch(/schema/);
    expect(problems.join()).not.toContain('hunter2');
  });
});
