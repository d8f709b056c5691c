import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';

const MINUTE = 60_000;

let pki: TestPki;
let service: RunningTestService;
const certs: Record<string, ClientCredentials> = {};
const keys: Record<string, string> = {};

/**
 * The service's clock, held still where the tests put it (issue 56). The windows are fixed and
 * aligned to the epoch, so on the wall clock a test's requests could straddle a window's end
 * (a count started afresh, no 429); held, every request of a test falls in one window.
 */
let now = new Date();
const clock = { now: () => now };

beforeAll(async () => {
  pki = await makeTestPki();
  // A default of 3 requests a minute.
  service = await startTestService(pki, {
    clock,
    rateLimit: { limit: 3, windowMs: MINUTE },
    defaultRoleArn: 'arn:aws:iam::000000000000:role/r',
  });
  const d = service.directory;
  await d.saveClient(AccessMother.client('default-quota'));
  await d.saveClient(AccessMother.client('own-quota', { rateLimit: '1/1m' }));
  await d.saveClient(AccessMother.client('two-keys'));
  await d.saveClient(
    AccessMother.client('queue', {
      permissions: ['issueQueueToken'],
      queueArn: 'arn:aws:sqs:eu-west-2:000000000000:q',
      rateLimit: '1/1m',
    }),
  );
  for (const cn of ['default-quota', 'own-quota', 'two-keys', 'queue']) {
    certs[cn] = await pki.client(cn);
    keys[cn] = (await service.issueKey(cn)).key;
  }
  keys['two-keys-2'] = (await service.issueKey('two-keys')).key;
});
afterAll(async () => {
  await service.close();
  pki.cleanup();
});

async function get(cn: string, path = '/case/X123456', key = keys[cn] as string, method = 'GET') {
  return httpsRequest(`${service.url}${path}`, {
    ca: pki.ca.certPem,
    cert: certs[cn]?.certPem as string,
    key: certs[cn]?.keyPem as string,
    method,
    headers: {
      'x-api-key': key,
      authorization: `Bearer ${await mintTestToken(pki, cn, { issuedAt: clock.now() })}`,
    },
  });
}

describe('step 5: the rate limit per API key', () => {
  it('counts down in the RateLimit header, then answers 429 with Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await get('default-quota'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429]);
    for (const a of answers) expect(a.headers['ratelimit-policy']).toBe('"per-api-key";q=3;w=60');
    expect(answers.map((a) => /r=(\d+)/.exec(String(a.headers.ratelimit))?.[1])).toEqual([
      '2',
      '1',
      '0',
      '0',
    ]);
    const refused = answers[3];
    expect(refused?.headers['content-type']).toBe('application/problem+json');
    expect(refused?.json()).toMatchObject({
      type: 'urn:case-read:problem:rate-limited',
      status: 429,
      title: 'Too many requests',
    });
    // What is left of the window the held clock is in, in whole seconds rounded up (1 to 60).
    const retryAfter = Math.ceil((MINUTE - (now.getTime() % MINUTE)) / 1000);
    expect(refused?.headers['retry-after']).toBe(String(retryAfter));
    expect(String(refused?.headers.ratelimit)).toBe(`"per-api-key";r=0;t=${retryAfter}`);
  });

  it('counts afresh when the window turns', async () => {
    expect((await get('default-quota')).status).toBe(429);
    now = new Date((Math.floor(now.getTime() / MINUTE) + 1) * MINUTE);
    const next = await get('default-quota');
    expect(next.status).toBe(200);
    expect(String(next.headers.ratelimit)).toBe('"per-api-key";r=2;t=60');
  });

  it("applies the client's own quota over the default", async () => {
    expect((await get('own-quota')).status).toBe(200);
    const second = await get('own-quota');
    expect(second.status).toBe(429);
    expect(second.headers['ratelimit-policy']).toBe('"per-api-key";q=1;w=60');
  });

  it('counts each key of a client apart (keyed on the API key)', async () => {
    for (let i = 0; i < 3; i++) expect((await get('two-keys')).status).toBe(200);
    expect((await get('two-keys')).status).toBe(429);
    expect((await get('two-keys', '/case/X123456', keys['two-keys-2'])).status).toBe(200);
  });

  it('POST /token over the limit → 429', async () => {
    expect((await get('queue', '/token', keys.queue, 'POST')).status).toBe(200);
    const over = await get('queue', '/token', keys.queue, 'POST');
    expect(over.status).toBe(429);
    expect((over.json() as { type: string }).type).toBe('urn:case-read:problem:rate-limited');
  });

  it('a request refused before step 5 (no valid key) is not counted and carries no RateLimit header', async () => {
    const refused = await get('own-quota', '/case/X123456', 'not-a-key');
    expect(refused.status).toBe(403);
    expect(refused.headers.ratelimit).toBeUndefined();
  });
});
