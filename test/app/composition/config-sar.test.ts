import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, ConfigError, loadConfig } from '../../../src/app/composition/config.js';
import { hopLines, hopsOf } from '../../../src/app/composition/hops.js';
import { STORE_REGISTRY } from '../../../src/app/composition/store-kinds.js';
import type { Environment } from '../../../src/ports/stores.js';
import { jwksOf, signingKey } from '../../support/authorisation-server.js';
import { runCli, runCliInProcess } from '../../support/cli.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * The SAR service's door's variables (decisions §23): `SAR_PORT` (no door without it), the key
 * set, issuer and role the token is checked against, the door's deadline; what `serve` refuses
 * and how it names it; what `config check` shows.
 */

/** The variables that have no default, and the bearer settings off. */
const BASE = {
  TLS_CERT: '/etc/case-read/server.pem',
  TLS_KEY: '/etc/case-read/server-key.pem',
  TLS_CLIENT_CA: '/etc/case-read/clients-ca.pem',
  BEARER_MODE: 'off',
};
const DOOR = {
  SAR_PORT: '8444',
  SAR_AUTH_JWKS: 'https://auth.example.org/.well-known/jwks.json',
  SAR_AUTH_ISSUER: 'https://auth.example.org/auth/issuer',
};

const load = (env: Environment): Config => loadConfig({ ...BASE, ...env }, STORE_REGISTRY);

function problemsOf(env: Environment): readonly string[] {
  try {
    load(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('the SAR door’s variables', () => {
  it('has no door without SAR_PORT; the role and the deadline have their defaults', () => {
    const config = load({});
    expect(config.SAR_PORT).toBeUndefined();
    expect(config.SAR_AUTH_ROLE).toBe('ROLE_SAR_DATA_ACCESS');
    expect(config.SAR_REQUEST_DEADLINE_MS).toBe(55_000);
    // Without the door, its key set and issuer are not needed.
    expect(load({ SAR_AUTH_ROLE: 'ROLE_X' }).SAR_AUTH_ROLE).toBe('ROLE_X');
  });

  it('reads each variable', () => {
    const config = load({ ...DOOR, SAR_AUTH_ROLE: 'ROLE_CASE_READ_SAR', SAR_REQUEST_DEADLINE_MS: '60000' });
    expect(config).toMatchObject({
      SAR_PORT: 8444,
      SAR_AUTH_JWKS: DOOR.SAR_AUTH_JWKS,
      SAR_AUTH_ISSUER: DOOR.SAR_AUTH_ISSUER,
      SAR_AUTH_ROLE: 'ROLE_CASE_READ_SAR',
      SAR_REQUEST_DEADLINE_MS: 60_000,
    });
    expect(load({ ...DOOR, SAR_AUTH_JWKS: '/etc/case-read/sar-jwks.json' }).SAR_AUTH_JWKS).toBe(
      '/etc/case-read/sar-jwks.json',
    );
    // Any free port, as PORT=0 is: tests start all three listeners so.
    expect(load({ ...DOOR, PORT: '0', MANAGEMENT_PORT: '0', SAR_PORT: '0' }).SAR_PORT).toBe(0);
  });

  it('with SAR_PORT, requires the key set and the issuer, naming each', () => {
    expect(problemsOf({ SAR_PORT: '8444' })).toEqual([
      "SAR_AUTH_JWKS: required with SAR_PORT: the key set the SAR service's tokens are checked against (a file path or an https:// URL)",
      "SAR_AUTH_ISSUER: required with SAR_PORT: the iss of the SAR service's tokens (the organisation's authorisation server)",
    ]);
    const { SAR_AUTH_ISSUER: _issuer, ...noIssuer } = DOOR;
    expect(problemsOf(noIssuer)).toEqual([
      "SAR_AUTH_ISSUER: required with SAR_PORT: the iss of the SAR service's tokens (the organisation's authorisation server)",
    ]);
  });

  it.each([
    [{ SAR_PORT: 'eighty' }, /^SAR_PORT: SAR_PORT must be a port number 0\.\.65535$/],
    [{ SAR_PORT: '70000' }, /^SAR_PORT: /],
    [{ SAR_PORT: '8443' }, /^SAR_PORT: SAR_PORT must be a port of its own: PORT is 8443 too$/],
    [{ SAR_PORT: '9464' }, /^SAR_PORT: SAR_PORT must be a port of its own: MANAGEMENT_PORT is 9464 too$/],
    [{ SAR_PORT: '9000', PORT: '9000' }, /^SAR_PORT: SAR_PORT must be a port of its own: PORT is 9000 too$/],
    [
      { SAR_AUTH_JWKS: 'http://auth.example.org/jwks' },
      /^SAR_AUTH_JWKS: expected a file path or an https:\/\/ URL$/,
    ],
    [
      { SAR_AUTH_JWKS: 'file:///etc/jwks.json' },
      /^SAR_AUTH_JWKS: expected a file path or an https:\/\/ URL$/,
    ],
    [{ SAR_AUTH_ROLE: 'ROLE SAR' }, /^SAR_AUTH_ROLE: expected a role of 1-128 letters, digits or _ \. : -/],
    [
      { SAR_REQUEST_DEADLINE_MS: '60001' },
      /^SAR_REQUEST_DEADLINE_MS: SAR_REQUEST_DEADLINE_MS must be a whole number 100\.\.60000$/,
    ],
    [{ SAR_REQUEST_DEADLINE_MS: '55s' }, /^SAR_REQUEST_DEADLINE_MS: /],
  ])('refuses %j, naming the variable', (env, message) => {
    const problems = problemsOf({ ...DOOR, ...env });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('shows the door and its key set as hops', () => {
    const lines = hopLines(hopsOf(load(DOOR), {})).join('\n');
    expect(lines).toMatch(
      /\n {2}sar door +127\.0\.0\.1:8444 +TLS, no client certificate asked; the SAR service's token verified/,
    );
    expect(lines).toMatch(
      /\n {2}SAR_AUTH_JWKS +auth\.example\.org:443 +TLS, the server's chain and host name verified/,
    );
    expect(hopLines(hopsOf(load({}), {})).join('\n')).not.toContain('sar door');
  });
});

describe('through the built CLI: serve and config check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-config-sar-'));
  let pki: TestPki;
  let env: Record<string, string>;
  let jwksFile: string;

  beforeAll(async () => {
    pki = await makeTestPki();
    jwksFile = pki.write('sar-jwks.json', JSON.stringify(jwksOf([await signingKey('as-1')])));
    env = {
      HOME: dir,
      TLS_CERT: pki.write('server.pem', pki.server.certPem),
      TLS_KEY: pki.write('server-key.pem', pki.server.keyPem),
      TLS_CLIENT_CA: pki.write('ca.pem', pki.ca.certPem),
      BEARER_MODE: 'off',
      ACCESS_STORE: `sqlite:${join(dir, 'access.db')}`,
      CASE_STORE: `sqlite:${join(dir, 'cases.db')}`,
      AUDIT_STORE: `sqlite:${join(dir, 'audit.db')}`,
      HOST: '127.0.0.1',
      PORT: '0',
      MANAGEMENT_PORT: '0',
    };
  });
  afterAll(() => {
    pki.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serve refuses to start with SAR_PORT and no issuer, or no key set, naming the variable', () => {
    const noIssuer = runCli(['serve'], { ...env, SAR_PORT: '0', SAR_AUTH_JWKS: jwksFile });
    expect(noIssuer.status).toBe(1);
    expect(noIssuer.stderr).toContain('SAR_AUTH_ISSUER: required with SAR_PORT');
    const noKeys = runCli(['serve'], { ...env, SAR_PORT: '0', SAR_AUTH_ISSUER: DOOR.SAR_AUTH_ISSUER });
    expect(noKeys.status).toBe(1);
    expect(noKeys.stderr).toContain('SAR_AUTH_JWKS: required with SAR_PORT');
    const missing = join(dir, 'missing-jwks.json');
    const unreadable = runCli(['serve'], {
      ...env,
      SAR_PORT: '0',
      SAR_AUTH_ISSUER: DOOR.SAR_AUTH_ISSUER,
      SAR_AUTH_JWKS: missing,
    });
    expect(unreadable.status).toBe(1);
    expect(unreadable.stderr).toContain(`SAR_AUTH_JWKS: JWKS file ${missing} cannot be read (ENOENT)`);
  });

  it('config check shows the door’s variables and hops, and reads its key set file as serve does', async () => {
    const door = { ...env, SAR_PORT: '8444', SAR_AUTH_ISSUER: DOOR.SAR_AUTH_ISSUER, SAR_AUTH_JWKS: jwksFile };
    const shown = await runCliInProcess(['config', 'check', '--json'], door);
    expect(shown.stderr).toBe('');
    const json = JSON.parse(shown.stdout) as Record<string, { value: string; source: string }>;
    expect(json.SAR_PORT).toEqual({ value: '8444', source: 'environment' });
    expect(json.SAR_AUTH_JWKS).toEqual({ value: jwksFile, source: 'environment' });
    expect(json.SAR_AUTH_ISSUER).toEqual({ value: DOOR.SAR_AUTH_ISSUER, source: 'environment' });
    expect(json.SAR_AUTH_ROLE).toEqual({ value: 'ROLE_SAR_DATA_ACCESS', source: 'default' });
    expect(json.SAR_REQUEST_DEADLINE_MS).toEqual({ value: '55000', source: 'default' });
    const text = await runCliInProcess(['config', 'check'], door);
    expect(text.stdout).toMatch(/\n {2}sar door +127\.0\.0\.1:8444 +TLS, no client certificate asked/);
    const notKeys = await runCliInProcess(['config', 'check'], {
      ...door,
      SAR_AUTH_JWKS: pki.write('not-jwks.json', '{"keys": [{"kty": "RSA", "d": "secret"}]}'),
    });
    expect(notKeys.status).toBe(1);
    expect(notKeys.stderr).toContain('SAR_AUTH_JWKS: JWKS file');
    expect(notKeys.stderr).toContain('public keys only');
    expect(notKeys.stderr).not.toContain('secret');
  });
});
