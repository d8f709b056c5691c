import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Config,
  ConfigError,
  loadConfig,
  loadIssuerConfig,
} from '../../../src/app/composition/config.js';
import { STORE_REGISTRY } from '../../../src/app/composition/store-kinds.js';
import type { Environment } from '../../../src/ports/stores.js';
import { runCliInProcess } from '../../support/cli.js';

/** The variables that have no default, and production. */
const PRODUCTION = {
  NODE_ENV: 'production',
  TLS_CERT: '/etc/case-read/server.pem',
  TLS_KEY: '/etc/case-read/server-key.pem',
  TLS_CLIENT_CA: '/etc/case-read/clients-ca.pem',
  BEARER_MODE: 'off',
};

function problemsOf(env: Environment): readonly string[] {
  try {
    loadConfig({ ...PRODUCTION, ...env }, STORE_REGISTRY);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

const load = (env: Environment): Config => loadConfig({ ...PRODUCTION, ...env }, STORE_REGISTRY);

describe('the production posture: stores off this host are encrypted and verified', () => {
  it.each([
    [
      'CASE_STORE',
      'postgres://svc@db.internal:5432/cases',
      /CASE_STORE: db\.internal:5432 is reached plaintext, which NODE_ENV=production refuses off this host; add sslmode=verify-full&sslrootcert=FILE/,
    ],
    [
      'ACCESS_STORE',
      'postgres://svc@db.internal/cases?sslmode=disable',
      /ACCESS_STORE: db\.internal:5432 is reached plaintext/,
    ],
    [
      'AUDIT_STORE',
      'postgres://svc@10.0.0.5/cases?sslmode=require',
      /AUDIT_STORE: 10\.0\.0\.5:5432 is reached encrypted but not verified, .*sslmode=verify-full/,
    ],
    [
      'RATE_LIMIT_STORE',
      'redis://cache.internal:6379',
      /RATE_LIMIT_STORE: cache\.internal:6379 is reached plaintext, .*; use rediss:\/\//,
    ],
  ])('%s=%s is refused, naming the variable and the fix', (variable, url, refusal) => {
    const problems = problemsOf({ [variable]: url });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(refusal);
    // The same store is accepted outside production: the posture is production's alone.
    expect(problemsOf({ [variable]: url, NODE_ENV: 'development' })).toEqual([]);
  });

  it.each([
    ['CASE_STORE', 'postgres://svc@db.internal/cases?sslmode=verify-full&sslrootcert=/etc/rds.pem'],
    ['CASE_STORE', 'postgres://svc@db.internal/cases?sslmode=verify-ca&sslrootcert=/etc/ca.pem'],
    // libpq: `require` with a root certificate verifies the chain.
    ['CASE_STORE', 'postgres://svc@db.internal/cases?sslmode=require&sslrootcert=/etc/ca.pem'],
    ['CASE_STORE', 'postgres://svc@127.0.0.1:5432/cases'],
    ['ACCESS_STORE', 'postgres://svc@localhost/cases'],
    ['RATE_LIMIT_STORE', 'rediss://cache.internal:6379'],
    ['RATE_LIMIT_STORE', 'redis://127.0.0.1:6379'],
    ['CASE_STORE', 'https://records.internal'],
    ['AUDIT_STORE', 'sqlite:/var/lib/case-read/audit.db'],
  ])('%s=%s is accepted', (variable, url) => {
    expect(problemsOf({ [variable]: url })).toEqual([]);
  });

  it('RATE_LIMIT_TLS_* with redis:// is refused: the files would be ignored', () => {
    expect(
      problemsOf({ RATE_LIMIT_STORE: 'redis://127.0.0.1:6379', RATE_LIMIT_TLS_CA: '/etc/ca.pem' }),
    ).toEqual([
      'RATE_LIMIT_STORE: RATE_LIMIT_TLS_CA, RATE_LIMIT_TLS_CERT and RATE_LIMIT_TLS_KEY need a rediss:// URL (TLS)',
    ]);
    expect(
      problemsOf({ RATE_LIMIT_STORE: 'rediss://127.0.0.1:6379', RATE_LIMIT_TLS_CERT: '/c.pem' }),
    ).toEqual(['RATE_LIMIT_TLS_KEY: RATE_LIMIT_TLS_CERT and RATE_LIMIT_TLS_KEY go together']);
  });
});

describe('the production posture: no CA key in the serving process, a log that names itself', () => {
  const localCa = {
    CLIENT_CERT_ISSUER: 'local',
    CLIENT_CA_CERT: '/etc/ca.pem',
    CLIENT_CA_KEY: '/etc/ca-key.pem',
  };

  it('CLIENT_CERT_ISSUER=local is refused in serve and config check; certs sign keeps it', () => {
    expect(problemsOf(localCa)).toEqual([
      "CLIENT_CERT_ISSUER: local keeps the client CA's private key in the serving process, which NODE_ENV=production refuses; use acm-pca (certs sign with a local CA on an operator's machine stays allowed)",
    ]);
    expect(problemsOf({ ...localCa, NODE_ENV: 'development' })).toEqual([]);
    // What `certs sign` reads: the operator's machine may hold the CA.
    expect(loadIssuerConfig({ ...PRODUCTION, ...localCa }, 'certs sign').CLIENT_CERT_ISSUER).toBe('local');
  });

  it.each([
    [{}, /^AUDIT_ORIGIN: unset; NODE_ENV=production with AUDIT_SIGNING_KEY needs the log's own name/],
    [
      { AUDIT_ORIGIN: 'case-read.invalid/audit' },
      /^AUDIT_ORIGIN: case-read\.invalid\/audit is under \.invalid/,
    ],
    [{ AUDIT_ORIGIN: 'audit.prod.invalid' }, /^AUDIT_ORIGIN: audit\.prod\.invalid is under \.invalid/],
  ])('AUDIT_SIGNING_KEY with AUDIT_ORIGIN %j is refused', (origin, refusal) => {
    const problems = problemsOf({ AUDIT_SIGNING_KEY: '/etc/audit-key.pem', ...origin });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(refusal);
  });

  it('a signed trail with its own origin, and an unsigned one with none, are accepted', () => {
    expect(
      load({ AUDIT_SIGNING_KEY: '/etc/audit-key.pem', AUDIT_ORIGIN: 'case-read.prod.example.org/audit' })
        .AUDIT_ORIGIN,
    ).toBe('case-read.prod.example.org/audit');
    // `invalid` inside a label is not the .invalid top-level name.
    expect(problemsOf({ AUDIT_SIGNING_KEY: '/k.pem', AUDIT_ORIGIN: 'invalid.example.org/audit' })).toEqual(
      [],
    );
    expect(problemsOf({})).toEqual([]);
  });
});

describe('the production posture in the commands that open a store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-posture-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const plaintext = 'postgres://svc@db.internal:5432/cases';

  it.each([
    [
      ['stores', 'migrate', '--case-store', plaintext],
      {},
      /--case-store: db\.internal:5432 is reached plaintext/,
    ],
    [
      ['clients', 'list'],
      { ACCESS_STORE: plaintext },
      /ACCESS_STORE: db\.internal:5432 is reached plaintext/,
    ],
    [['audit', 'verify'], { AUDIT_STORE: plaintext }, /AUDIT_STORE: db\.internal:5432 is reached plaintext/],
    [
      ['cases', 'import', 'x.json', '--store', plaintext],
      {},
      /--store: db\.internal:5432 is reached plaintext/,
    ],
    [
      ['audit', 'archive', '--to', join(dir, 'archive'), '--older-than', '30'],
      { AUDIT_SIGNING_KEY: join(dir, 'audit-key.pem'), AUDIT_STORE: `sqlite:${join(dir, 'audit.db')}` },
      /AUDIT_ORIGIN: unset; NODE_ENV=production with AUDIT_SIGNING_KEY/,
    ],
  ])('case-read %j refuses before opening anything', async (args, env, refusal) => {
    const result = await runCliInProcess(args, { NODE_ENV: 'production', ...env });
    expect(result.stderr).toMatch(refusal);
    expect(result.status).not.toBe(0);
    // Outside production the same command goes on to open the store (and fails otherwise).
    const relaxed = await runCliInProcess(args, { NODE_ENV: 'development', ...env });
    expect(relaxed.stderr).not.toMatch(/NODE_ENV=production/);
  });
});
