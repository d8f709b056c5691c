import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { thumbprintOfPem } from '../../src/adapters/tls-listener/peer-certificate.js';
import { httpsRequest } from '../support/https-client.js';
import { AccessMother } from '../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../support/pki.js';
import { freePort } from '../support/ports.js';
import { mintTestToken, type RunningTestService, startTestService } from '../support/service.js';

/**
 * Debian's nginx (1.22) as the mutual-TLS gateway in front of the service in
 * IDENTITY_MODE=trusted-header, as an operator would set it up: nginx verifies the client
 * certificate and states it in headers, on a connection of its own made with the `gateway`
 * certificate. Each DN form nginx offers, forged headers, hostile names, and a forwarded
 * certificate for bound tokens. `.ci/run` installs nginx when it is missing.
 */
const NGINX = '/usr/sbin/nginx';
const available = existsSync(NGINX);
if (!available && process.env.CI) throw new Error('nginx is not installed: .ci/run installs it');

let pki: TestPki;
let service: RunningTestService;
let nginx: ChildProcess;
let base: string;
const keys: Record<string, string> = {};
const certs: Record<string, ClientCredentials> = {};

/** A client certificate for any subject, signed by the test CA with openssl (the test PKI refuses odd CNs). */
function opensslClient(name: string, subject: string): ClientCredentials {
  const dir = join(pki.dir, `openssl-${name}`);
  mkdirSync(dir, { recursive: true });
  const caKey = pki.write('ca-key.pem', pki.ca.keyPem);
  const caCert = pki.write('ca.pem', pki.ca.certPem);
  const ext = join(dir, 'ext.cnf');
  writeFileSync(ext, 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n');
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run(
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    join(dir, 'key.pem'),
    '-subj',
    subject,
    '-out',
    join(dir, 'req.csr'),
  );
  run(
    'x509',
    '-req',
    '-in',
    join(dir, 'req.csr'),
    '-CA',
    caCert,
    '-CAkey',
    caKey,
    '-set_serial',
    `0x${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
    '-days',
    '1',
    '-extfile',
    ext,
    '-out',
    join(dir, 'cert.pem'),
  );
  const certPem = readFileSync(join(dir, 'cert.pem'), 'utf8');
  const keyPem = readFileSync(join(dir, 'key.pem'), 'utf8');
  return { certPem, keyPem, serialNumber: '', commonName: name, thumbprint: thumbprintOfPem(certPem) };
}

beforeAll(async () => {
  if (!available) return;
  pki = await makeTestPki();
  service = await startTestService(pki, { identityMode: 'trusted-header', trustedGateways: ['gateway'] });
  for (const cn of ['client-a', 'client-b']) {
    await service.directory.saveClient(AccessMother.client(cn));
    keys[cn] = (await service.issueKey(cn)).key;
    certs[cn] = await pki.client(cn);
  }
  const gateway = await pki.client('gateway');
  const port = await freePort();
  const dir = join(pki.dir, 'nginx');
  mkdirSync(dir, { recursive: true });
  const file = (name: string, content: string) => pki.write(name, content);
  const identity = (dn: string, forward: boolean) => `
      proxy_pass https://service/;
      proxy_set_header subject-distinguished-name ${dn};
      proxy_set_header cert-serial-number $ssl_client_serial;
      proxy_set_header ssl-client-cert ${forward ? '$ssl_client_escaped_cert' : '""'};
      proxy_set_header x-forwarded-client-cert "";`;
  const conf = file(
    'nginx.conf',
    `
worker_processes 1;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
daemon off;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream service { server ${new URL(service.url).host.replace('localhost', '127.0.0.1')}; }
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${file('server.pem', `${pki.server.certPem}\n${pki.ca.certPem}`)};
    ssl_certificate_key ${file('server-key.pem', pki.server.keyPem)};
    ssl_client_certificate ${file('ca.pem', pki.ca.certPem)};
    ssl_verify_client on;
    proxy_ssl_certificate ${file('gateway.pem', gateway.certPem)};
    proxy_ssl_certificate_key ${file('gateway-key.pem', gateway.keyPem)};
    proxy_ssl_trusted_certificate ${join(pki.dir, 'ca.pem')};
    proxy_ssl_verify on;
    proxy_ssl_name localhost;
    location /rfc/ {${identity('$ssl_client_s_dn', false)} }
    location /legacy/ {${identity('$ssl_client_s_dn_legacy', false)} }
    location /forward/ {${identity('$ssl_client_s_dn', true)} }
  }
}
`,
  );
  nginx = spawn(NGINX, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  base = `https://localhost:${port}`;
  for (let i = 0; i < 100; i++) {
    const up = await httpsRequest(`${base}/rfc/health`, {
      ca: pki.ca.certPem,
      cert: certs['client-a']!.certPem,
      key: certs['client-a']!.keyPem,
    }).then(
      () => true,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 30_000);
afterAll(async () => {
  if (!available) return;
  nginx?.kill('SIGQUIT');
  await service?.close();
  pki?.cleanup();
});

async function through(
  path: string,
  cert: ClientCredentials,
  as: string,
  extra: Record<string, string> = {},
  thumbprint?: string,
) {
  const response = await httpsRequest(`${base}${path}X123456/home-office-interest`, {
    ca: pki.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
    headers: {
      'x-api-key': keys[as] as string,
      authorization: `Bearer ${await mintTestToken(pki, as, thumbprint ? { certificateThumbprint: thumbprint } : {})}`,
      ...extra,
    },
  });
  return { status: response.status, type: (response.json() as { type?: string }).type };
}

describe.runIf(available)('behind nginx 1.22 (IDENTITY_MODE=trusted-header)', () => {
  it('reads an ordinary name in both forms nginx offers', async () => {
    expect((await through('/rfc/case/', certs['client-a']!, 'client-a')).status).toBe(200);
    expect((await through('/legacy/case/', certs['client-a']!, 'client-a')).status).toBe(200);
  });

  it('forged identity headers from a client are overwritten by nginx', async () => {
    const forged = {
      'subject-distinguished-name': 'CN=client-b',
      'cert-serial-number': '01',
      'ssl-client-cert': encodeURIComponent(certs['client-b']!.certPem),
    };
    // client-a's certificate, claiming client-b with client-b's key and token: refused.
    const refused = await through('/rfc/case/', certs['client-a']!, 'client-b', forged);
    expect(refused.status).toBe(403);
    // As itself, the forged headers change nothing.
    expect((await through('/legacy/case/', certs['client-a']!, 'client-a', forged)).status).toBe(200);
  });

  it.each([
    ['client-b/x', '/O=Example/CN=client-b\\/x'],
    ['client-b,x', '/O=Example/CN=client-b,x'],
    ['client-b+x', '/O=Example/CN=client-b\\+x'],
    ['quoted', '/O=Example/CN=client-b "x"'],
  ])('a certificate for CN %s is never taken as client-b, in either form', async (name, subject) => {
    const hostile = opensslClient(name.replace(/\W/g, '-'), subject);
    for (const path of ['/rfc/case/', '/legacy/case/']) {
      const { status } = await through(path, hostile, 'client-b');
      expect([path, status]).toEqual([path, 403]);
    }
  });

  it('a certificate-bound token works when nginx forwards the certificate, and only then', async () => {
    const a = certs['client-a']!;
    expect((await through('/forward/case/', a, 'client-a', {}, a.thumbprint)).status).toBe(200);
    expect((await through('/rfc/case/', a, 'client-a', {}, a.thumbprint)).status).toBe(401);
    // Bound to another certificate: refused even with the certificate forwarded.
    const other = certs['client-b']!;
    expect((await through('/forward/case/', a, 'client-a', {}, other.thumbprint)).status).toBe(401);
  });
});
