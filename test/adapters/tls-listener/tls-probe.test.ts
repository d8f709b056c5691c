import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TlsListenerKind } from '../../../src/adapters/tls-listener/server.js';
import { probeWithoutCertificate } from '../../../src/adapters/tls-listener/tls-probe.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';

let pki: TestPki;
beforeAll(async () => {
  pki = await makeTestPki();
});
afterAll(() => pki.cleanup());

const tlsFiles = () => ({
  cert: `${pki.server.certPem}\n${pki.ca.certPem}`,
  key: pki.server.keyPem,
  clientCa: pki.ca.certPem,
});

describe('probeWithoutCertificate', () => {
  it.each<TlsListenerKind>(['https', 'tls-handoff'])(
    'finds the %s listener refusing a client without a certificate',
    async (kind) => {
      const server = await startServer(() => new Response('case data'), {
        host: '127.0.0.1',
        port: 0,
        tls: tlsFiles(),
        tlsListener: kind,
      });
      try {
        expect(await probeWithoutCertificate('127.0.0.1', server.port)).toBe('refused');
      } finally {
        await server.close();
      }
    },
  );

  it('finds a TLS listener that does not ask for a certificate answering anyone', async () => {
    // What Deno.serve does with `ca`/`requestCert`: ignores them.
    const lax = createHttpsServer({ cert: tlsFiles().cert, key: pki.server.keyPem }, (_request, response) =>
      response.end('case data'),
    );
    await new Promise<void>((resolve) => lax.listen(0, '127.0.0.1', resolve));
    try {
      expect(await probeWithoutCertificate('127.0.0.1', (lax.address() as AddressInfo).port)).toBe(
        'answered',
      );
    } finally {
      lax.closeAllConnections();
      await new Promise((resolve) => lax.close(resolve));
    }
  });

  it('says timeout, not refused, when nothing answers in time', async () => {
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => sockets.push(socket)); // accepts, never speaks TLS
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      expect(await probeWithoutCertificate('127.0.0.1', (silent.address() as AddressInfo).port, 300)).toBe(
        'timeout',
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
