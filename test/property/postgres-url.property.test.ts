import { fc, test } from '@fast-check/vitest';
import { parse as pgParse } from 'pg-connection-string';
import { describe, expect } from 'vitest';
import {
  displayPostgresUrl,
  postgresHop,
  postgresUrlProblem,
  SYSTEM_ROOTS,
  targetOf,
} from '../../src/adapters/postgres/url.js';
import { hostile } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * The PostgreSQL store URL and its TLS parameters (src/adapters/postgres/url.ts), as an operator
 * writes one in CASE_STORE, AUDIT_STORE, ACCESS_STORE or WITNESS_STORE, and as node-postgres
 * (pg-connection-string) then reads what is handed to it. The TLS rules are restated here from
 * decisions §17 (libpq's sslmode meanings), not from the code.
 */

const MODES = ['disable', 'require', 'verify-ca', 'verify-full'];
const LOOPBACK = ['localhost', 'LocalHost', '127.0.0.1', '127.1.2.3', '[::1]'];

/** A file path as an operator might write one: any text, percent-encoded into the URL. */
const file = fc.oneof(
  fc.constantFrom('/etc/ssl/rds.pem', 'ca.pem', SYSTEM_ROOTS, ''),
  fc.string({ unit: 'binary', maxLength: 30 }),
);
const parts = fc.record({
  user: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
  password: fc.option(fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }), { nil: undefined }),
  host: fc.oneof(
    fc.constantFrom(...LOOPBACK),
    fc.domain(),
    fc.ipV4(),
    fc.constantFrom('[2001:db8::1]', 'db.internal'),
  ),
  port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
  // `.` and `..` are dot segments, which a URL's path never keeps (`%2E` neither).
  database: fc
    .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 })
    .filter((d) => d !== '.' && d !== '..'),
  schema: fc.option(fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/), { nil: undefined }),
  sslmode: fc.option(
    fc.oneof(fc.constantFrom(...MODES), fc.constantFrom('prefer', 'allow', 'no-verify', 'VERIFY-FULL', '')),
    {
      nil: undefined,
    },
  ),
  sslrootcert: fc.option(file, { nil: undefined }),
  sslcert: fc.option(file, { nil: undefined }),
  sslkey: fc.option(file, { nil: undefined }),
});
type Parts = typeof parts extends fc.Arbitrary<infer T> ? T : never;

const enc = encodeURIComponent;
function urlOf(p: Parts): string {
  const auth = `${enc(p.user)}${p.password === undefined ? '' : `:${enc(p.password)}`}@`;
  const query = (['schema', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey'] as const)
    .filter((name) => p[name] !== undefined)
    .map((name) => `${name}=${enc(p[name] as string)}`)
    .join('&');
  return `postgres://${auth}${p.host}${p.port === undefined ? '' : `:${p.port}`}/${enc(p.database)}${query ? `?${query}` : ''}`;
}

/** Whether the TLS parameters make sense, by the rules of decisions §17. */
function tlsAllowed(p: Parts): boolean {
  const mode = p.sslmode;
  if (mode !== undefined && !MODES.includes(mode)) return false;
  const tls = mode !== undefined && mode !== 'disable';
  for (const f of [p.sslrootcert, p.sslcert, p.sslkey])
    if (f !== undefined && (f === '' || !tls)) return false;
  if ((p.sslcert === undefined) !== (p.sslkey === undefined)) return false;
  if ((mode === 'verify-ca' || mode === 'verify-full') && p.sslrootcert === undefined) return false;
  if (p.sslrootcert === SYSTEM_ROOTS && mode !== 'verify-full') return false;
  return true;
}

/** What the parameters assure (libpq: `require` with a root certificate verifies the chain). */
function assuranceOf(p: Parts): string {
  if (p.sslmode === undefined || p.sslmode === 'disable') return 'none';
  if (p.sslmode === 'require') return p.sslrootcert === undefined ? 'encrypted' : 'verify-ca';
  return p.sslmode;
}

describe('PostgreSQL store URLs', () => {
  test.prop([parts], runs(1500))(
    'a URL written from its parts is refused exactly when its TLS parameters break a rule, and otherwise read as written',
    (p) => {
      const url = urlOf(p);
      const problem = postgresUrlProblem(url);
      expect(problem === undefined).toBe(tlsAllowed(p));
      if (problem !== undefined) return;
      const target = targetOf(url);
      expect(target.schema).toBe(p.schema ?? 'public');
      expect(target.tls).toEqual({
        assurance: assuranceOf(p),
        ...(assuranceOf(p) !== 'none' && p.sslrootcert !== undefined ? { rootCert: p.sslrootcert } : {}),
        ...(assuranceOf(p) !== 'none' && p.sslcert !== undefined ? { cert: p.sslcert } : {}),
        ...(assuranceOf(p) !== 'none' && p.sslkey !== undefined ? { key: p.sslkey } : {}),
      });
      expect(postgresHop(url).tls).toBe(target.tls.assurance);
      // The driver is handed no query: nothing in it can switch TLS or the host.
      expect(target.connectionString).not.toContain('?');
      // node-postgres connects to the host, port, user and password the URL names.
      const pg = pgParse(target.connectionString);
      expect(pg.host?.toLowerCase()).toBe(p.host.replace(/^\[(.*)\]$/, '$1').toLowerCase());
      expect(pg.port || undefined).toBe(p.port === undefined || p.port === 5432 ? undefined : String(p.port));
      expect(pg.user).toBe(p.user);
      expect(pg.password).toBe(p.password ?? '');
      const hop = postgresHop(url);
      // Loopback: localhost, ::1, 127.0.0.0/8 (fc.ipV4() gives some of those too).
      expect(hop.loopback).toBe(LOOPBACK.includes(p.host) || /^127(\.\d{1,3}){3}$/.test(p.host));
      // A password never shows: wherever else the URL holds the same characters (a host that
      // contains them, say), their showing says nothing, so those URLs are not asked about.
      const elsewhere = (pw: string) => url.replace(`:${enc(pw)}@`, ':@').includes(enc(pw));
      if (p.password !== undefined && p.password.length > 3 && !elsewhere(p.password)) {
        expect(displayPostgresUrl(url)).not.toContain(enc(p.password));
        expect(hop.to).not.toContain(enc(p.password));
      }
    },
    TIMEOUT,
  );

  test.prop([hostile(parts.map(urlOf), 200)], runs(2000))(
    'any text: a problem or a URL whose target and hop read, never a throw; a hop said to be loopback is where node-postgres connects',
    (url) => {
      const problem = postgresUrlProblem(url);
      const shown = displayPostgresUrl(url);
      expect(typeof shown).toBe('string');
      if (problem !== undefined) {
        expect(problem).toMatch(/\S/);
        return;
      }
      const target = targetOf(url);
      const hop = postgresHop(url);
      expect(hop.tls).toBe(target.tls.assurance);
      if (!/^postgres(ql)?:\/\//.test(url)) return; // another kind's URL: the registry never hands it here
      if (hop.loopback) {
        let host: string | undefined;
        try {
          host = pgParse(target.connectionString).host ?? undefined;
        } catch {
          return; // node-postgres cannot read it: nothing is connected to
        }
        expect(
          ['localhost', '::1'].includes((host ?? '').toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(host ?? ''),
        ).toBe(true);
      }
    },
    TIMEOUT,
  );
});
