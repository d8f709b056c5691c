import { describe, expect, it } from 'vitest';
import { upstreamSettings } from '../../../src/adapters/upstream/settings.js';
import type { Environment } from '../../../src/ports/stores.js';

/** The upstream kind's own variables (ADR 0003): what it makes of the token endpoint's TLS. */
const CLIENT = { UPSTREAM_CLIENT_ID: 'case-read', UPSTREAM_CLIENT_SECRET_FILE: '/run/secrets/client-secret' };

const problemsOf = (env: Environment) => {
  const read = upstreamSettings.read(env);
  return 'problems' in read ? read.problems : [];
};

describe('UPSTREAM_TOKEN_TLS_CA', () => {
  it('is one of the upstream kind’s variables, and is read as the token endpoint’s CA (a file, or system)', () => {
    expect(upstreamSettings.variables.map((v) => v.name)).toContain('UPSTREAM_TOKEN_TLS_CA');
    for (const value of ['/run/secrets/idp-ca.pem', 'system']) {
      const read = upstreamSettings.read({
        UPSTREAM_TOKEN_URL: 'https://idp.internal/oauth2/token',
        ...CLIENT,
        UPSTREAM_TOKEN_TLS_CA: value,
      });
      expect(read).toMatchObject({ settings: { tokenTlsCa: value } });
    }
  });

  it('is refused without UPSTREAM_TOKEN_URL: it would verify nothing', () => {
    expect(problemsOf({ UPSTREAM_TOKEN_TLS_CA: '/run/secrets/idp-ca.pem' })).toEqual([
      'UPSTREAM_TOKEN_TLS_CA: only with UPSTREAM_TOKEN_URL',
    ]);
  });

  it('is refused with an http:// token endpoint on loopback: no handshake, nothing to verify', () => {
    expect(
      problemsOf({
        UPSTREAM_TOKEN_URL: 'http://127.0.0.1:8081/token',
        ...CLIENT,
        UPSTREAM_TOKEN_TLS_CA: '/run/secrets/idp-ca.pem',
      }),
    ).toEqual([
      'UPSTREAM_TOKEN_TLS_CA: only with an https:// UPSTREAM_TOKEN_URL (an http:// one has no certificate to verify)',
    ]);
  });

  it('a token URL that is no URL is reported as such, whatever UPSTREAM_TOKEN_TLS_CA says', () => {
    expect(
      problemsOf({ UPSTREAM_TOKEN_URL: 'idp', ...CLIENT, UPSTREAM_TOKEN_TLS_CA: '/run/secrets/idp-ca.pem' }),
    ).toEqual(['UPSTREAM_TOKEN_URL: expected an http(s):// URL']);
  });
});
