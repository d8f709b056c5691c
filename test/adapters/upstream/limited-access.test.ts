import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import type { Client } from '../../../src/domain/access/model.js';
import { CASE_OPERATIONS, CASE_READS, casePath } from '../../../src/domain/case-operations.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { httpsRequest } from '../../support/https-client.js';
import { makeIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider.js';
import { AccessMother, CaseMother } from '../../support/mothers.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { testContext } from '../../support/stores.js';
import { startUpstreamInstance, type UpstreamInstance, upstreamSettings } from '../../support/upstream.js';

/**
 * With CASE_STORE=https://… the system of record decides limited access (decisions §8):
 * this service relays the verified on-behalf-of token in X-On-Behalf-Of, and the upstream's
 * 403 limited-access comes back as this service's own, with its detail. Two instances: the
 * upstream holds the rules in SQLite; the consumer-facing one holds none.
 */
const EXCLUDED = 'officer.a@probation.example';
const NAMED = 'officer.b@probation.example';
const STRANGER = 'officer.z@probation.example';

let upstream: UpstreamInstance;
let store: Opened<CaseRepository>;
let front: RunningTestService;
let key: string;
let idp: TestIdentityProvider;
let upstreamReader: Client;

beforeAll(async () => {
  upstream = await startUpstreamInstance([CaseMother.full('X123456'), CaseMother.limited('L000001')]);
  // One identity provider, trusted by both instances for on-behalf-of tokens.
  idp = await makeIdentityProvider(upstream.pki);
  const { onBehalfOf } = idp;
  // This service's own client at the upstream: it may relay users' tokens.
  upstreamReader = AccessMother.client('case-reader', {
    permissions: [...CASE_READS],
    onBehalfOf,
  });
  await upstream.service.directory.saveClient(upstreamReader);
  const opened = await upstreamStores.cases?.open(upstream.url, {
    ...testContext,
    settings: upstreamSettings(upstream),
  });
  if (!opened) throw new Error('no upstream store');
  store = opened;
  front = await startTestService(upstream.pki, { repository: store.value });
  // The consumer, at the front instance: set to allow, so only the upstream can refuse it.
  await front.directory.saveClient(
    AccessMother.client('consumer', {
      permissions: [...CASE_READS],
      onBehalfOf,
      limitedAccess: 'allow',
    }),
  );
  key = (await front.issueKey('consumer')).key;
}, 30_000);
afterAll(async () => {
  await front?.close();
  await store?.close();
  await upstream?.close();
});

async function read(path: string, user: string | null) {
  const cert = await upstream.pki.client('consumer');
  const headers: Record<string, string> = {
    'x-api-key': key,
    authorization: `Bearer ${await mintTestToken(upstream.pki, 'consumer')}`,
  };
  if (user !== null) {
    headers['x-on-behalf-of'] = await idp.token(user);
  }
  const response = await httpsRequest(`${front.url}${path}`, {
    ca: upstream.pki.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
    headers,
  });
  return { status: response.status, body: response.json() as Record<string, unknown> };
}

describe.each(CASE_OPERATIONS.map((row) => casePath(row, 'L000001')))(
  'CASE_STORE=https://…: limited access on %s is the upstream’s decision',
  (path) => {
    it('an excluded user: the upstream’s 403 limited-access, with its detail', async () => {
      const { status, body } = await read(path, EXCLUDED);
      expect(status).toBe(403);
      expect(body).toMatchObject({
        type: 'urn:case-read:problem:limited-access',
        detail: 'You are excluded from viewing this case.',
        instance: path,
      });
    });

    it('a user the restriction does not name: 403 limited-access', async () => {
      const { status, body } = await read(path, STRANGER);
      expect([status, body.type, body.detail]).toEqual([
        403,
        'urn:case-read:problem:limited-access',
        'This case is restricted.',
      ]);
    });

    it('a user the restriction names: 200 (the token was relayed: without it the upstream refuses)', async () => {
      expect((await read(path, NAMED)).status).toBe(200);
    });

    it('no user: the upstream decides by its own setting for this service (deny → 403)', async () => {
      const { status, body } = await read(path, null);
      expect([status, body.type]).toEqual([403, 'urn:case-read:problem:limited-access']);
    });
  },
);

describe('CASE_STORE=https://…: what is not limited access', () => {
  it('a case without rules is 200 to everyone; an unknown crn 404', async () => {
    expect((await read('/case/X123456', EXCLUDED)).status).toBe(200);
    expect((await read('/case/X123456', null)).status).toBe(200);
    expect((await read('/case/Q999999', EXCLUDED)).status).toBe(404);
  });

  it('the upstream set to allow for this service answers a limited case to no user', async () => {
    await upstream.service.directory.saveClient({ ...upstreamReader, limitedAccess: 'allow' });
    try {
      expect((await read('/case/L000001', null)).status).toBe(200);
    } finally {
      await upstream.service.directory.saveClient(upstreamReader);
    }
  });
});
