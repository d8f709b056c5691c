import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing } from '../../../src/adapters/opentelemetry/tracing.js';
import { createCa, issueServerCertificate } from '../../../src/adapters/x509/pki.js';

/**
 * The trace exporter verifies an https collector itself (decisions §20): with
 * `NODE_TLS_REJECT_UNAUTHORIZED=0` in the process, a collector whose certificate no trusted CA
 * signed gets no export, and so never the headers (a collector's key). The same export to a
 * loopback collector over http arrives, headers and all: what fails is the verification.
 */

const received: { readonly scheme: string; readonly headers: IncomingHttpHeaders }[] = [];
const answer =
  (scheme: string) =>
  (request: { headers: IncomingHttpHeaders }, response: { writeHead(s: number): { end(): void } }) => {
    received.push({ scheme, headers: request.headers });
    response.writeHead(200).end();
  };
const http = createHttpServer(answer('http'));
let https: ReturnType<typeof createHttpsServer>;
const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;

beforeAll(async () => {
  const leaf = await issueServerCertificate(await createCa({ commonName: 'a CA no one trusts' }));
  https = createHttpsServer({ cert: leaf.certPem, key: leaf.keyPem }, answer('https'));
  await Promise.all([
    new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve)),
    new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve)),
  ]);
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
});
afterAll(async () => {
  if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
  for (const server of [http, https]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** One span exported to `url`, waited for (shutdown flushes and ends the export): the export's failure, if any. */
async function exportOneSpan(url: string): Promise<Error | undefined> {
  const tracing = await startTracing({
    serviceName: 'case-read-service',
    serviceVersion: 'test',
    url,
    protocol: 'http/json',
    headers: { 'api-key': 'collector-key' },
    sampler: 'always_on',
    samplerRatio: 1,
  });
  tracing.tracer.startSpan('GET /v1/cases/{crn}').end();
  return tracing.shutdown().then(
    () => undefined,
    (error: unknown) => error as Error,
  );
}

describe('the trace exporter', () => {
  it('sends nothing to a collector it cannot verify, whatever NODE_TLS_REJECT_UNAUTHORIZED says', async () => {
    const port = (https.address() as AddressInfo).port;
    const failure = await exportOneSpan(`https://127.0.0.1:${port}/v1/traces`);
    expect(failure?.message).toMatch(/unable to verify the first certificate/);
    expect(received.filter((r) => r.scheme === 'https')).toEqual([]);
  });

  it('exports, with its headers, to a loopback collector over http (the same setup, nothing to verify)', async () => {
    const port = (http.address() as AddressInfo).port;
    expect(await exportOneSpan(`http://127.0.0.1:${port}/v1/traces`)).toBeUndefined();
    expect(received.filter((r) => r.scheme === 'http').map((r) => r.headers['api-key'])).toEqual([
      'collector-key',
    ]);
  });
});
