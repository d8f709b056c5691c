import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InMemoryAccessDirectory } from '../../../src/adapters/memory/access-directory.js';
import { InMemoryRateLimiter } from '../../../src/adapters/memory/rate-limiter.js';
import { startTracing, type Tracing } from '../../../src/adapters/opentelemetry/tracing.js';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import type { Opened } from '../../../src/ports/stores.js';
import { FAKE_CREDENTIALS, FakeSts, issuerFor } from '../../support/fake-sts.js';
import { fixtureCases } from '../../support/fixtures.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { testContext } from '../../support/stores.js';
import { startUpstreamInstance, type UpstreamInstance, upstreamSettings } from '../../support/upstream.js';

/**
 * Tracing with the SDK's in-memory exporter (decisions §10): a request that arrives with a
 * `traceparent` continues that trace through the server span, the store spans, the client
 * span to the upstream and the upstream's own server span (this service again, reading
 * SQLite), and the STS call carries it too. Nothing a span holds is a crn, a key or a token.
 */

const exporter = new InMemorySpanExporter();
const sts = new FakeSts();
let tracing: Tracing;
let upstream: UpstreamInstance;
let store: Opened<CaseRepository>;
let service: RunningTestService;
let key: string;
let token: string;
const QUEUE = 'arn:aws:sqs:eu-west-2:000000000000:client-a-queue';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

beforeAll(async () => {
  tracing = await startTracing(
    {
      serviceName: 'case-read-service',
      serviceVersion: 'test',
      url: 'http://127.0.0.1:1/v1/traces',
      protocol: 'http/json',
      headers: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
    },
    new SimpleSpanProcessor({ exporter }),
  );
  upstream = await startUpstreamInstance(fixtureCases(), { tracing });
  const opened = await upstreamStores.cases?.open(upstream.url, {
    ...testContext,
    tracing,
    settings: upstreamSettings(upstream),
  });
  if (!opened) throw new Error('no upstream store');
  store = opened;
  const endpoint = await sts.start();
  service = await startTestService(upstream.pki, {
    repository: store.value,
    tracing,
    issuer: issuerFor(endpoint, { tracing }),
    defaultRoleArn: 'arn:aws:iam::000000000000:role/client-a-reader',
  });
  await service.directory.saveClient(
    AccessMother.client('client-a', { permissions: ['getCase', 'issueQueueToken'], queueArn: QUEUE }),
  );
  key = (await service.issueKey('client-a')).key;
  token = await mintTestToken(upstream.pki, 'client-a');
}, 30_000);
afterAll(async () => {
  await service?.close();
  await store?.close();
  await upstream?.close();
  await sts.stop();
  await tracing?.shutdown();
});
beforeEach(() => exporter.reset());

async function call(path: string, method: 'GET' | 'POST' = 'GET') {
  const client = await upstream.pki.client('client-a');
  return httpsRequest(`${service.url}${path}`, {
    method,
    ca: upstream.pki.ca.certPem,
    cert: client.certPem,
    key: client.keyPem,
    headers: {
      'x-api-key': key,
      authorization: `Bearer ${token}`,
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
    },
  });
}

const named = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('a traced request', () => {
  it('continues the incoming trace through the server, the stores, the upstream call and the upstream itself', async () => {
    const response = await call('/case/X123456');
    expect(response.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    // Ours and the upstream's: the same route template, two server spans.
    const servers = named(spans, 'GET /case/{crn}').filter((s) => s.kind === 1);
    expect(servers).toHaveLength(2);
    const ours = servers.find((s) => parentOf(s) === PARENT_ID);
    expect(ours?.spanContext().traceId).toBe(TRACE_ID);
    expect(ours?.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/case/{crn}',
      'http.response.status_code': 200,
      'case_read.client': 'client-a',
    });
    const ourId = ours?.spanContext().spanId;
    expect(named(spans, 'access findClient').map(parentOf)).toContain(ourId);
    expect(named(spans, 'rateLimit consume').map(parentOf)).toContain(ourId);
    const read = named(spans, 'cases findPersonalDetails').find((s) => parentOf(s) === ourId);
    expect(read).toBeDefined();
    const client = named(spans, 'GET /case/{crn}').find((s) => s.kind === 2);
    expect(parentOf(client as ReadableSpan)).toBe(read?.spanContext().spanId);
    expect(client?.attributes['server.address']).toMatch(/^localhost:\d+$/);
    // The upstream's server span is the child of our client span: traceparent went with the call.
    const theirs = servers.find((s) => s !== ours);
    expect(parentOf(theirs as ReadableSpan)).toBe(client?.spanContext().spanId);
    expect(theirs?.spanContext().traceId).toBe(TRACE_ID);
  });

  it('carries the trace context to STS on POST /token', async () => {
    sts.calls.length = 0;
    const response = await call('/token', 'POST');
    expect(response.status).toBe(200);
    const stsSpan = named(exporter.getFinishedSpans(), 'STS AssumeRole')[0];
    expect(stsSpan?.spanContext().traceId).toBe(TRACE_ID);
    const traceparent = String(sts.calls[0]?.headers.traceparent);
    expect(traceparent).toBe(`00-${TRACE_ID}-${stsSpan?.spanContext().spanId}-01`);
  });

  it('puts no crn, key, token or credential in any span, whatever the answer', async () => {
    const crns = fixtureCases().map((c) => c.crn);
    for (const crn of [...crns.slice(0, 6), 'N000404']) {
      await call(`/case/${crn}`);
      await call(`/case/${crn}/community-manager`);
      await call(`/v1/persons/${crn}/risks/scores?page=1&perPage=5`);
    }
    await call('/token', 'POST');
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(40);
    const text = JSON.stringify(
      spans.map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
        resource: s.resource.attributes,
      })),
    );
    for (const crn of [...crns, 'N000404']) expect(text).not.toContain(crn);
    expect(text).not.toContain(key);
    expect(text).not.toContain(token);
    expect(text).not.toContain(key.split('.')[0] ?? key);
    expect(text).not.toMatch(/@/); // no e-mail
    expect(text).not.toContain(FAKE_CREDENTIALS.AccessKeyId);
    expect(text).not.toContain(FAKE_CREDENTIALS.SessionToken);
  });
});

describe('a traced port', () => {
  it('offers no at-once member, so a traced request makes the store calls its spans name', async () => {
    const limiter = tracing.traced(new InMemoryRateLimiter(), 'rateLimit', {});
    expect(limiter.consumeNow).toBeUndefined();
    const directory = tracing.traced(new InMemoryAccessDirectory(), 'access', {});
    expect(directory.heldAdmission).toBeUndefined();
    exporter.reset();
    await limiter.consume('k', { limit: 1, windowMs: 1000 }, new Date());
    expect(named(exporter.getFinishedSpans(), 'rateLimit consume')).toHaveLength(1);
  });
});
