import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../src/adapters/tls-listener/server.js';
import { probeWithoutCertificate } from '../../src/adapters/tls-listener/tls-probe.js';
import { reachableHost, whyNotMutualTls } from '../../src/app/listener-check.js';
import { makeTestPki, type TestPki } from '../support/pki.js';

/** What `serve` checks before it says it is listening, and the message it stops with. */
const RUNTIME = { name: 'deno', version: '9.9.9' } as const;

let pki: TestPki;
beforeAll(async () => {
  pki = await makeTestPki();
});
afterAll(() => pki.cleanup());

describe('whyNotMutualTls', () => {
  it('lets a listener serve that refuses a client without a certificate', async () => {
    const server = await startServer(() => new Response('case data'), {
      host: '127.0.0.1',
      port: 0,
      tls: { cert: pki.server.certPem, key: pki.server.keyPem, clientCa: pki.ca.certPem },
    });
    try {
      expect(await whyNotMutualTls(server, '127.0.0.1', RUNTIME, probeWithoutCertificate)).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('stops one that answers without a certificate, saying so and naming the runtime', async () => {
    // A TLS server that takes `ca` but does not ask for a certificate, as Deno.serve does.
    const lax = createHttpsServer(
      { cert: pki.server.certPem, key: pki.server.keyPem, ca: pki.ca.certPem },
      (_q, r) => r.end('case data'),
    );
    await new Promise<void>((resolve) => lax.listen(0, '127.0.0.1', resolve));
    try {
      const server = { verifiesClientCertificates: true, port: (lax.address() as AddressInfo).port };
      expect(await whyNotMutualTls(server, '0.0.0.0', RUNTIME, probeWithoutCertificate)).toBe(
        'the HTTPS listener answered a request without a client certificate on deno 9.9.9; refusing to serve without mutual TLS',
      );
    } finally {
      lax.closeAllConnections();
      await new Promise((resolve) => lax.close(resolve));
    }
  });

  it('stops one that says it cannot verify, without probing it', async () => {
    let probed = false;
    const message = await whyNotMutualTls(
      { verifiesClientCertificates: false, port: 1 },
      '127.0.0.1',
      RUNTIME,
      async () => {
        probed = true;
        return 'refused';
      },
    );
    expect(message).toBe(
      'the HTTPS listener on this runtime cannot verify client certificates; refusing to serve without mutual TLS',
    );
    expect(probed).toBe(false);
  });

  it('stops one that neither answers nor refuses in time: not proven is not safe', async () => {
    expect(
      await whyNotMutualTls(
        { verifiesClientCertificates: true, port: 1 },
        '::',
        RUNTIME,
        async () => 'timeout',
      ),
    ).toBe(
      'the HTTPS listener did not refuse a client without a certificate in time on deno 9.9.9; refusing to serve without mutual TLS',
    );
  });

  it('probes an unspecified address on loopback', () => {
    expect([reachableHost('0.0.0.0'), reachableHost('::'), reachableHost('10.0.0.5')]).toEqual([
      '127.0.0.1',
      '::1',
      '10.0.0.5',
    ]);
  });
});
