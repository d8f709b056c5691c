import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import { PrometheusMetrics } from '../../../src/adapters/prometheus/metrics.js';
import type { RunningServer, TlsFiles } from '../../../src/adapters/tls-listener/server.js';
import { DEFAULT_MAX_BODY_BYTES, type UpstreamSettings } from '../../../src/adapters/upstream/settings.js';
import { upstreamStores } from '../../../src/adapters/upstream/store-kind.js';
import { issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { CertificateExpiry } from '../../../src/app/certificate-expiry.js';
import { readAuditSigner } from '../../../src/app/composition/audit-wiring.js';
import { certificateWatch } from '../../../src/app/composition/certificate-watch.js';
import { ConfigError } from '../../../src/app/composition/config.js';
import { createCertificateIssuer } from '../../../src/app/composition/issuers.js';
import { loadServiceConfig } from '../../../src/app/composition/store-kinds.js';
import { readListenerTls, reloadListenerTls } from '../../../src/app/composition/tls-files.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import { type Opened, StoreError } from '../../../src/ports/stores.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';
import { testContext } from '../../support/stores.js';

/**
 * Private key and secret files readable by others, refused where `serve` reads them (issue
 * 47): at start, each variable, naming it, the file and its mode and saying the fix; and at
 * a reload of the listener's and the upstream's TLS files, the set in use staying and the
 * reload-failure metric counting it. Readable by the group is allowed.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-secret-modes-'));
let pki: TestPki;
let files: {
  serverCert: string;
  serverKey: string;
  ca: string;
  caKey: string;
  auditKey: string;
  clientCert: string;
  clientKey: string;
  apiKey: string;
  bearer: string;
  clientSecret: string;
};

/** Writes `content` to a new file of exactly this mode (umask set aside). */
function write(name: string, content: string, mode = 0o600): string {
  const path = join(dir, name);
  rmSync(path, { force: true });
  writeFileSync(path, content, { mode });
  chmodSync(path, mode);
  return path;
}

/** A copy of `path` that others can read, as a secret volume's default 0644 leaves it. */
const exposed = (path: string, mode = 0o644): string =>
  write(`exposed-${mode.toString(8)}-${path.split('/').at(-1)}`, readFileSync(path, 'utf8'), mode);

const refusal = (variable: string, path: string, mode = '0644', what = 'readable') =>
  `${variable}: ${path} is ${what} by others (mode ${mode}); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`;

beforeAll(async () => {
  pki = await makeTestPki();
  const client = await pki.client('case-reader');
  files = {
    serverCert: write('server.pem', `${pki.server.certPem}\n${pki.ca.certPem}`, 0o644),
    serverKey: write('server-key.pem', pki.server.keyPem),
    ca: write('ca.pem', pki.ca.certPem, 0o644),
    caKey: write('ca-key.pem', pki.ca.keyPem),
    auditKey: write('audit-signing-key.pem', (await generateCheckpointKeys()).privatePem),
    clientCert: write('client.pem', client.certPem, 0o644),
    clientKey: write('client-key.pem', client.keyPem),
    apiKey: write('api-key', 'an-api-key\n'),
    bearer: write('bearer', 'a-bearer-token\n'),
    clientSecret: write('client-secret', 'a-client-secret\n'),
  };
});
afterAll(() => {
  pki?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const configOf = (env: Record<string, string> = {}) =>
  loadServiceConfig({
    TLS_CERT: files.serverCert,
    TLS_KEY: files.serverKey,
    TLS_CLIENT_CA: files.ca,
    BEARER_JWKS: pki.jwksPath,
    BEARER_ISSUER: 'https://issuer.example',
    BEARER_AUDIENCE: 'case-read-service',
    ...env,
  });

/** The problems of the ConfigError `run` throws or rejects with. */
async function problemsOf(run: () => unknown): Promise<readonly string[]> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const upstreamSettings = (overrides: Partial<UpstreamSettings> = {}): UpstreamSettings => ({
  connections: 1,
  timeoutMs: 1000,
  retries: 0,
  timeZone: 'Europe/London',
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  tlsCertFile: files.clientCert,
  tlsKeyFile: files.clientKey,
  tlsCaFile: files.ca,
  apiKeyFile: files.apiKey,
  bearerFile: files.bearer,
  ...overrides,
});

/** The upstream case store opened with these settings (nothing listens: opening connects to nothing). */
async function openUpstream(settings: UpstreamSettings): Promise<Opened<CaseRepository>> {
  const opened = await upstreamStores.cases?.open('https://127.0.0.1:9', { ...testContext, settings });
  if (!opened) throw new Error('no upstream store');
  return opened;
}

describe('at start, a key or secret file others can read is refused, naming the variable, the file and its mode', () => {
  it('TLS_KEY (serve, config check, and each reload read it so)', async () => {
    const key = exposed(files.serverKey);
    expect(await problemsOf(() => readListenerTls(configOf({ TLS_KEY: key })))).toEqual([
      refusal('TLS_KEY', key),
    ]);
  });

  it('TLS_KEY writable by others (0602): anyone could put their own key in its place', async () => {
    const key = exposed(files.serverKey, 0o602);
    expect(await problemsOf(() => readListenerTls(configOf({ TLS_KEY: key })))).toEqual([
      refusal('TLS_KEY', key, '0602', 'writable'),
    ]);
  });

  it('AUDIT_SIGNING_KEY', async () => {
    const key = exposed(files.auditKey);
    expect(await problemsOf(() => readAuditSigner(configOf({ AUDIT_SIGNING_KEY: key })))).toEqual([
      refusal('AUDIT_SIGNING_KEY', key),
    ]);
  });

  it('CLIENT_CA_KEY (serve, and certs sign, build the issuer so)', async () => {
    const key = exposed(files.caKey);
    const config = configOf({ CLIENT_CERT_ISSUER: 'local', CLIENT_CA_CERT: files.ca, CLIENT_CA_KEY: key });
    expect(await problemsOf(() => createCertificateIssuer(config, pki.ca.certPem))).toEqual([
      refusal('CLIENT_CA_KEY', key),
    ]);
  });

  it.each([
    ['UPSTREAM_TLS_KEY', 'tlsKeyFile', 'clientKey'],
    ['UPSTREAM_API_KEY_FILE', 'apiKeyFile', 'apiKey'],
    ['UPSTREAM_BEARER_FILE', 'bearerFile', 'bearer'],
  ] as const)('%s', async (variable, setting, file) => {
    const path = exposed(files[file]);
    const opening = openUpstream(upstreamSettings({ [setting]: path }));
    await expect(opening).rejects.toThrow(StoreError);
    await expect(opening).rejects.toThrow(refusal(variable, path));
  });

  it('UPSTREAM_CLIENT_SECRET_FILE', async () => {
    const path = exposed(files.clientSecret);
    const { bearerFile: _, ...withoutBearer } = upstreamSettings();
    const opening = openUpstream({
      ...withoutBearer,
      tokenUrl: 'https://idp.example/token',
      clientId: 'case-read',
      clientSecretFile: path,
    });
    await expect(opening).rejects.toThrow(refusal('UPSTREAM_CLIENT_SECRET_FILE', path));
  });

  it('a symlink to a file others can read: the link is followed, the file named as configured', async () => {
    const link = join(dir, 'link-to-exposed-key.pem');
    symlinkSync(exposed(files.serverKey), link);
    expect(await problemsOf(() => readListenerTls(configOf({ TLS_KEY: link })))).toEqual([
      refusal('TLS_KEY', link),
    ]);
  });

  it('group-readable (0640, 0440) is allowed, for every variable', async () => {
    for (const mode of [0o640, 0o440]) {
      const config = configOf({
        TLS_KEY: exposed(files.serverKey, mode),
        AUDIT_SIGNING_KEY: exposed(files.auditKey, mode),
        CLIENT_CERT_ISSUER: 'local',
        CLIENT_CA_CERT: files.ca,
        CLIENT_CA_KEY: exposed(files.caKey, mode),
      });
      expect(readListenerTls(config).certificates[0]?.certificate).toBe('server');
      expect(await readAuditSigner(config)).toBeDefined();
      expect(await createCertificateIssuer(config, pki.ca.certPem)).not.toBeNull();
      const store = await openUpstream(
        upstreamSettings({
          tlsKeyFile: exposed(files.clientKey, mode),
          apiKeyFile: exposed(files.apiKey, mode),
          bearerFile: exposed(files.bearer, mode),
        }),
      );
      expect(store.tls?.current()?.subject).toBe('case-reader');
      await store.close();
    }
  });
});

describe('at a reload, a key replaced by one others can read is refused: the set in use stays, the metric counts it', () => {
  it('the listener’s TLS_KEY and the upstream’s UPSTREAM_TLS_KEY', async () => {
    const serverKey = write('reload-server-key.pem', pki.server.keyPem);
    const serverCert = write('reload-server.pem', `${pki.server.certPem}\n${pki.ca.certPem}`, 0o644);
    const clientKey = write('reload-client-key.pem', readFileSync(files.clientKey, 'utf8'));
    const clientCert = write('reload-client.pem', readFileSync(files.clientCert, 'utf8'), 0o644);
    const config = configOf({ TLS_CERT: serverCert, TLS_KEY: serverKey });
    const store = await openUpstream(upstreamSettings({ tlsCertFile: clientCert, tlsKeyFile: clientKey }));
    const metrics = new PrometheusMetrics();
    const logged: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const expiry = new CertificateExpiry({
      certificates: metrics.certificates,
      client: metrics.clientCertificate,
      warn: () => {},
      now: () => new Date(),
    });
    const initial = readListenerTls(config);
    const served: TlsFiles[] = [];
    const server = { setTls: (tls: TlsFiles) => served.push(tls) } as unknown as RunningServer;
    const watch = certificateWatch(
      {
        paths: [serverCert, serverKey, files.ca],
        certificates: initial.certificates,
        read: () => reloadListenerTls(config),
      },
      store.tls ? [store.tls] : [],
      { expiry, metrics, logger, intervalMs: 0 },
    )(server);
    try {
      const upstreamBefore = store.tls?.current();
      // Replaced: a new certificate, and its key written with Kubernetes' default mode.
      const next = await issueServerCertificate(pki.ca);
      const nextClient = await pki.client('case-reader');
      write('reload-server.pem', `${next.certPem}\n${pki.ca.certPem}`, 0o644);
      write('reload-server-key.pem', next.keyPem, 0o644);
      write('reload-client.pem', nextClient.certPem, 0o644);
      write('reload-client-key.pem', nextClient.keyPem, 0o644);
      await watch.poll();
      await watch.poll();
      const failures = logged.filter((line) => line.msg === 'tls reload failed, the set in use stays');
      expect(failures.map(({ certificate, trigger, reason }) => ({ certificate, trigger, reason }))).toEqual([
        { certificate: 'server', trigger: 'file', reason: refusal('TLS_KEY', serverKey) },
        { certificate: 'upstream-client', trigger: 'file', reason: refusal('UPSTREAM_TLS_KEY', clientKey) },
      ]);
      const text = await metrics.text();
      expect(text).toContain('case_read_tls_reload_failures_total{certificate="server"} 1');
      expect(text).toContain('case_read_tls_reload_failures_total{certificate="upstream-client"} 1');
      // The sets in use stay: nothing new given to the listener, the upstream's certificate unchanged.
      expect(served).toEqual([]);
      expect(store.tls?.current()).toEqual(upstreamBefore);
      expect(JSON.stringify(logged)).not.toContain('PRIVATE KEY');

      // The mode alone put right (group-readable): seen as a change, and the new sets loaded.
      chmodSync(serverKey, 0o640);
      chmodSync(clientKey, 0o640);
      await watch.poll();
      await watch.poll();
      expect(served.map((tls) => tls.key)).toEqual([next.keyPem]);
      expect(store.tls?.current()?.serialNumber).toBe(nextClient.serialNumber);
      expect(logged.filter((line) => line.msg === 'tls reloaded').map((line) => line.certificate)).toEqual([
        'server',
        'upstream-client',
      ]);
    } finally {
      watch.stop();
      await store.close();
    }
  });

  it('a key made readable by others in place, its contents unchanged: tried, refused and counted, not left for the next restart', async () => {
    const serverKey = write('chmod-server-key.pem', pki.server.keyPem);
    const config = configOf({ TLS_KEY: serverKey });
    const metrics = new PrometheusMetrics();
    const expiry = new CertificateExpiry({
      certificates: metrics.certificates,
      client: metrics.clientCertificate,
      warn: () => {},
      now: () => new Date(),
    });
    const served: TlsFiles[] = [];
    const server = { setTls: (tls: TlsFiles) => served.push(tls) } as unknown as RunningServer;
    const watch = certificateWatch(
      {
        paths: [files.serverCert, serverKey, files.ca],
        certificates: readListenerTls(config).certificates,
        read: () => reloadListenerTls(config),
      },
      [],
      { expiry, metrics, logger: pino({ level: 'silent' }), intervalMs: 0 },
    )(server);
    try {
      chmodSync(serverKey, 0o644);
      await watch.poll();
      await watch.poll();
      expect(await metrics.text()).toContain('case_read_tls_reload_failures_total{certificate="server"} 1');
      expect(served).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});
