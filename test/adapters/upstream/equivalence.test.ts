import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import { CASE_OPERATIONS, CASE_READS, type CaseRead, casePath } from '../../../src/domain/case-operations.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { fixtureCases } from '../../support/fixtures.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { testContext } from '../../support/stores.js';
import { startUpstreamInstance, type UpstreamInstance, upstreamSettings } from '../../support/upstream.js';

/**
 * The same service answering from SQLite (the upstream instance itself) and from the
 * upstream store (a second instance reading the first over HTTPS): every fixture, every
 * operation, the same status and the same body.
 */
let upstream: UpstreamInstance;
let store: Opened<CaseRepository>;
let viaUpstream: RunningTestService;
let keys: { sqlite: string; upstream: string };
let token: string;

beforeAll(async () => {
  upstream = await startUpstreamInstance(fixtureCases());
  const opened = await upstreamStores.cases?.open(upstream.url, {
    ...testContext,
    settings: upstreamSettings(upstream, 8),
  });
  if (!opened) throw new Error('no upstream store');
  store = opened;
  viaUpstream = await startTestService(upstream.pki, { repository: store.value });
  const everything = AccessMother.client('reader', {
    permissions: [...CASE_READS],
  });
  await upstream.service.directory.saveClient(everything);
  await viaUpstream.directory.saveClient(everything);
  keys = {
    sqlite: (await upstream.service.issueKey('reader')).key,
    upstream: (await viaUpstream.issueKey('reader')).key,
  };
  token = await mintTestToken(upstream.pki, 'reader');
}, 30_000);
afterAll(async () => {
  await viaUpstream?.close();
  await store?.close();
  await upstream?.close();
});

/** The queries an operation is also asked with, beyond none: risk scores, a page of several and a later page of one. */
const QUERIES: Partial<Record<CaseRead, readonly string[]>> = {
  getRiskScores: ['?page=1&perPage=10', '?page=2&perPage=1'],
};

/** Every case operation's path for `crn` (the table's), each with its queries, or with none. */
const PATHS = (crn: string) =>
  CASE_OPERATIONS.flatMap((row) => (QUERIES[row.id] ?? ['']).map((query) => `${casePath(row, crn)}${query}`));

describe('CASE_STORE=https://… answers exactly as CASE_STORE=sqlite:… does', () => {
  const crns = [...fixtureCases().map((c) => c.crn), 'Q999998'];
  it.each(crns)('%s, every operation', async (crn) => {
    const reader = await upstream.pki.client('reader');
    for (const path of PATHS(crn)) {
      const ask = (url: string, key: string) =>
        httpsRequest(`${url}${path}`, {
          ca: upstream.pki.ca.certPem,
          cert: reader.certPem,
          key: reader.keyPem,
          headers: { 'x-api-key': key, authorization: `Bearer ${token}` },
        });
      const [direct, proxied] = [
        await ask(upstream.url, keys.sqlite),
        await ask(viaUpstream.url, keys.upstream),
      ];
      expect(proxied.status, path).toBe(direct.status);
      expect(proxied.headers['content-type']).toBe(direct.headers['content-type']);
      // Problem bodies carry each service's own request id; everything else is the same.
      const body = (r: typeof direct) => {
        const { requestId: _id, ...rest } = r.json() as Record<string, unknown>;
        return rest;
      };
      expect(body(proxied), path).toStrictEqual(body(direct));
    }
  });
});
