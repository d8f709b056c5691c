import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, type ServeSetup, startServe } from '../support/cli.js';
import { fixtureCases } from '../support/fixtures.js';
import { httpsRequest } from '../support/https-client.js';

/**
 * `serve` with `OTEL_TRACES_EXPORTER=otlp` exporting to an OTLP/HTTP receiver this test
 * starts, in both protocols: the spans arrive (at the latest when SIGTERM flushes them), the
 * incoming `traceparent` is continued, and no crn is in what was sent.
 */

interface Received {
  readonly type: string;
  readonly body: Buffer;
  readonly authorization: string | undefined;
}

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';
let dir: string;
let setup: ServeSetup;
let receiver: Server;
let endpoint: string;
const received: Received[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-otlp-'));
  setup = prepareServe(dir);
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        received.push({
          type: String(req.headers['content-type']),
          body: Buffer.concat(chunks),
          authorization: req.headers.authorization,
        });
      }
      res.writeHead(200, { 'content-type': String(req.headers['content-type']) }).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}, 60_000);
afterAll(() => {
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Serves, asks for a few crns with a traceparent, stops (flushing the spans), and returns what the receiver got. */
async function traced(protocol: 'http/json' | 'http/protobuf'): Promise<Received[]> {
  received.length = 0;
  const { url, child } = await startServe({
    ...setup.env,
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20collector-key',
  });
  for (const crn of ['X123456', 'A000001', 'N000404']) {
    const response = await httpsRequest(`${url}/case/${crn}`, {
      ca: setup.ca,
      cert: setup.client.cert,
      key: setup.client.key,
      headers: {
        'x-api-key': setup.apiKey,
        authorization: `Bearer ${setup.token}`,
        traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      },
    });
    expect(response.status).toBe(crn === 'N000404' ? 404 : 200);
  }
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  expect(code).toBe(0);
  return [...received];
}

const CRNS = [...fixtureCases().map((c) => c.crn), 'N000404'];

describe('traces exported over OTLP/HTTP', () => {
  it('http/json: the server span continues the caller’s trace, store spans are its children, no crn anywhere', async () => {
    const exports = await traced('http/json');
    expect(exports.length).toBeGreaterThan(0);
    expect(exports[0]?.type).toBe('application/json');
    expect(exports[0]?.authorization).toBe('Bearer collector-key');
    type Span = { name: string; traceId: string; spanId: string; parentSpanId?: string };
    const spans: Span[] = exports.flatMap((e) =>
      (
        JSON.parse(e.body.toString()) as {
          resourceSpans: { scopeSpans: { spans: Span[] }[] }[];
        }
      ).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)),
    );
    const servers = spans.filter((s) => s.name === 'GET /case/{crn}');
    expect(servers).toHaveLength(3);
    for (const server of servers) {
      expect(server.traceId).toBe(TRACE_ID);
      expect(server.parentSpanId).toBe(PARENT_ID);
      const children = spans.filter((s) => s.parentSpanId === server.spanId).map((s) => s.name);
      expect(children).toEqual(
        expect.arrayContaining(['access findClient', 'rateLimit consume', 'audit append']),
      );
      expect(children.filter((name) => name.startsWith('cases find'))).toHaveLength(1);
    }
    const text = exports.map((e) => e.body.toString()).join('\n');
    expect(text).toContain('"case-read-service"');
    for (const crn of CRNS) expect(text).not.toContain(crn);
    expect(text).not.toContain(setup.apiKey);
  });

  it('http/protobuf: the same spans, as protobuf', async () => {
    const exports = await traced('http/protobuf');
    expect(exports.length).toBeGreaterThan(0);
    expect(exports[0]?.type).toBe('application/x-protobuf');
    const bytes = Buffer.concat(exports.map((e) => e.body));
    // Strings are stored as UTF-8 in protobuf; ids as raw bytes.
    expect(bytes.includes(Buffer.from('GET /case/{crn}'))).toBe(true);
    expect(bytes.includes(Buffer.from(TRACE_ID, 'hex'))).toBe(true);
    for (const crn of CRNS) expect(bytes.includes(Buffer.from(crn))).toBe(false);
  });
});
