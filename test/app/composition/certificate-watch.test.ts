import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../src/adapters/prometheus/metrics.js';
import type { RunningServer, TlsFiles } from '../../../src/adapters/tls-listener/server.js';
import { issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { CertificateExpiry } from '../../../src/app/certificate-expiry.js';
import { certificateWatch } from '../../../src/app/composition/certificate-watch.js';
import { loadServiceConfig } from '../../../src/app/composition/store-kinds.js';
import { readListenerTls, reloadListenerTls } from '../../../src/app/composition/tls-files.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';

/**
 * The SAR service's door serves the service's own certificate (decisions §23): a new one in
 * the files reaches the door's listener with the API's, on a poll and on SIGHUP; a set the
 * API's listener refuses reaches neither.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-watch-'));
let pki: TestPki;
afterAll(() => {
  pki.cleanup();
  rmSync(dir, { recursive: true, force: true });
});
beforeAll(async () => {
  pki = await makeTestPki();
});

/** A listener that keeps the sets it is given, or refuses them when told to. */
function listener(given: TlsFiles[], refuse = false): RunningServer {
  return {
    url: 'https://127.0.0.1:0',
    port: 0,
    verifiesClientCertificates: false,
    drain: async () => ({ closedGracefully: 0, destroyedAtGrace: 0, unfinishedAtGrace: 0 }),
    close: async () => {},
    setTls: (files) => {
      if (refuse) throw new Error('this TLS stack cannot load the set');
      given.push(files);
    },
  };
}

function watchOf(server: RunningServer, sar: RunningServer) {
  const cert = join(dir, 'server.pem');
  const key = join(dir, 'server-key.pem');
  writeFileSync(cert, pki.server.certPem);
  writeFileSync(key, pki.server.keyPem, { mode: 0o600 });
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, pki.ca.certPem);
  const config = loadServiceConfig({ TLS_CERT: cert, TLS_KEY: key, TLS_CLIENT_CA: ca, BEARER_MODE: 'off' });
  const metrics = new PrometheusMetrics();
  const expiry = new CertificateExpiry({
    certificates: metrics.certificates,
    client: metrics.clientCertificate,
    warn: () => {},
    now: () => new Date(),
  });
  const watch = certificateWatch(
    {
      paths: [cert, key, ca],
      certificates: readListenerTls(config).certificates,
      read: () => reloadListenerTls(config),
    },
    [],
    { expiry, metrics, logger: pino({ level: 'silent' }), intervalMs: 0 },
  )(server, sar);
  return { watch, cert, key, metrics };
}

describe('the certificate watch with the SAR door', () => {
  it('hands a new server certificate to the door with the API listener, on a change and on SIGHUP', async () => {
    const api: TlsFiles[] = [];
    const door: TlsFiles[] = [];
    const { watch, cert, key } = watchOf(listener(api), listener(door));
    try {
      const next = await issueServerCertificate(pki.ca);
      writeFileSync(cert, next.certPem);
      writeFileSync(key, next.keyPem, { mode: 0o600 });
      await watch.poll();
      await watch.poll();
      expect(api.map((files) => files.cert)).toEqual([next.certPem]);
      expect(door.map((files) => files.cert)).toEqual([next.certPem]);
      await watch.reloadAll();
      expect(door).toHaveLength(2);
    } finally {
      watch.stop();
    }
  });

  it('a set the API listener refuses reaches neither: the door keeps the one in use', async () => {
    const door: TlsFiles[] = [];
    const { watch, metrics } = watchOf(listener([], true), listener(door));
    try {
      await watch.reloadAll();
      expect(door).toEqual([]);
      expect(await metrics.text()).toContain('case_read_tls_reload_failures_total{certificate="server"} 1');
    } finally {
      watch.stop();
    }
  });
});
