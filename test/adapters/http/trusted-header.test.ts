import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonNameOf, trustedGatewayIdentity } from '../../../src/adapters/http/identity.js';
import type { AuditRecord } from '../../../src/domain/audit/record.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';

let pki: TestPki;
let gateway: ClientCredentials;
let clientA: ClientCredentials;
let headerMode: RunningTestService;
let tlsMode: RunningTestService;
const keys: Record<string, string> = {};
const audited: AuditRecord[] = [];

const token = (clientId: string, thumbprint?: string) =>
  mintTestToken(pki, clientId, thumbprint ? { certificateThumbprint: thumbprint } : {});

beforeAll(async () => {
  pki = await makeTestPki();
  gateway = await pki.client('gateway');
  clientA = await pki.client('client-a');
  headerMode = await startTestService(pki, {
    identityMode: 'trusted-header',
    trustedGateways: ['gateway'],
    audit: { append: async (record) => void audited.push(record) },
  });
  tlsMode = await startTestService(pki, { identityMode: 'tls' });
  for (const service of [headerMode, tlsMode]) {
    await service.directory.saveClient(AccessMother.client('client-a'));
    await service.directory.saveClient(AccessMother.client('client-b'));
  }
  keys.headerA = (await headerMode.issueKey('client-a')).key;
  keys.headerB = (await headerMode.issueKey('client-b')).key;
  keys.tlsA = (await tlsMode.issueKey('client-a')).key;
  keys.tlsB = (await tlsMode.issueKey('client-b')).key;
  await headerMode.directory.revokeCertificate({
    serialNumber: 'DEAD01',
    clientId: null,
    revokedAt: new Date(),
  });
});
afterAll(async () => {
  await headerMode.close();
  await tlsMode.close();
  pki.cleanup();
});

const get = (service: RunningTestService, cert: ClientCredentials, headers: Record<string, string>) =>
  httpsRequest(`${service.url}/case/X123456/home-office-interest`, {
    ca: pki.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
    headers,
  });

describe('IDENTITY_MODE=trusted-header', () => {
  it('takes the client from subject-distinguished-name and cert-serial-number', async () => {
    const response = await get(headerMode, gateway, {
      'subject-distinguished-name': 'C=GB,O=Example,CN=client-a',
      'cert-serial-number': '0a:1b:2c',
      'x-api-key': keys.headerA as string,
      authorization: `Bearer ${await token('client-a')}`,
    });
    expect(response.status).toBe(200);
  });

  it('refuses a request without the headers (403), even from the gateway certificate', async () => {
    const response = await get(headerMode, gateway, {
      'x-api-key': keys.headerA as string,
      authorization: `Bearer ${await token('client-a')}`,
    });
    expect(response.status).toBe(403);
    expect((response.json() as { type: string }).type).toBe('urn:case-read:problem:client-not-allowed');
  });

  it('refuses a malformed distinguished name or serial', async () => {
    for (const [dn, serial] of [
      ['O=Example', '0A'],
      ['CN=a,CN=b', '0A'],
      ['CN=client-a', 'xyz'],
    ]) {
      const response = await get(headerMode, gateway, {
        'subject-distinguished-name': dn as string,
        'cert-serial-number': serial as string,
        'x-api-key': keys.headerA as string,
        authorization: `Bearer ${await token('client-a')}`,
      });
      expect(response.status).toBe(403);
    }
  });

  it('checks the header serial against the revocation list', async () => {
    const response = await get(headerMode, gateway, {
      'subject-distinguished-name': 'CN=client-a',
      'cert-serial-number': '00:de:ad:01',
      'x-api-key': keys.headerA as string,
      authorization: `Bearer ${await token('client-a')}`,
    });
    expect(response.status).toBe(403);
  });

  it('refuses a certificate-bound token: no certificate thumbprint is known in this mode', async () => {
    const response = await get(headerMode, gateway, {
      'subject-distinguished-name': 'CN=client-a',
      'cert-serial-number': '0A',
      'x-api-key': keys.headerA as string,
      authorization: `Bearer ${await token('client-a', clientA.thumbprint)}`,
    });
    expect(response.status).toBe(401);
  });
});

describe('IDENTITY_MODE=trusted-header: only a listed gateway may set the identity headers', () => {
  const claimB = { 'subject-distinguished-name': 'C=GB,O=Example,CN=client-b', 'cert-serial-number': '0B' };

  it('a listed gateway speaks for client-b', async () => {
    const response = await get(headerMode, gateway, {
      ...claimB,
      'x-api-key': keys.headerB as string,
      authorization: `Bearer ${await token('client-b')}`,
    });
    expect(response.status).toBe(200);
    const record = audited.find((r) => r.requestId === response.headers['x-request-id']);
    expect(record?.clientId).toBe('client-b');
    expect(record?.certificateSerial).toBe('B');
  });

  it('another valid client certificate sending the same headers cannot act as client-b (403)', async () => {
    const response = await get(headerMode, clientA, {
      ...claimB,
      'x-api-key': keys.headerB as string,
      authorization: `Bearer ${await token('client-b')}`,
    });
    expect(response.status).toBe(403);
    expect((response.json() as { type: string }).type).toBe('urn:case-read:problem:access-denied');
  });

  it('its headers are ignored: it is judged as itself, on its own certificate', async () => {
    const response = await get(headerMode, clientA, {
      ...claimB,
      'x-api-key': keys.headerA as string,
      authorization: `Bearer ${await token('client-a', clientA.thumbprint)}`,
    });
    expect(response.status).toBe(200);
    const record = audited.find((r) => r.requestId === response.headers['x-request-id']);
    expect(record?.clientId).toBe('client-a');
    expect(record?.certificateSerial).toBe(clientA.serialNumber);
  });
});

describe('trustedGatewayIdentity', () => {
  const forged = new Request('https://service.test/case/X123456', {
    headers: { 'subject-distinguished-name': 'CN=client-a', 'cert-serial-number': '0A' },
  });
  const peerCert = (commonName: string) => ({
    commonName,
    serialNumber: '1F',
    thumbprintS256: 'thumb',
    notAfter: new Date('2030-01-01T00:00:00Z'),
  });

  it('gives no identity to a connection without a verified certificate, whatever the headers say', () => {
    const identify = trustedGatewayIdentity(new Set(['gateway']), () => undefined);
    expect(identify(forged, {})).toBeUndefined();
  });

  it('takes the headers from a listed gateway and the certificate from anyone else', () => {
    const gatewayPeer = trustedGatewayIdentity(new Set(['gw-1', 'gw-2']), () => peerCert('gw-2'));
    expect(gatewayPeer(forged, {})).toMatchObject({ commonName: 'client-a', serialNumber: 'A' });
    const otherPeer = trustedGatewayIdentity(new Set(['gw-1', 'gw-2']), () => peerCert('client-z'));
    expect(otherPeer(forged, {})).toStrictEqual(peerCert('client-z'));
  });

  it('refuses to be built without a gateway', () => {
    expect(() => trustedGatewayIdentity(new Set(), () => undefined)).toThrow(/at least one trusted gateway/);
  });
});

describe('IDENTITY_MODE=tls ignores the identity headers', () => {
  it('a client cannot claim another CN through the headers', async () => {
    const response = await get(tlsMode, clientA, {
      'subject-distinguished-name': 'CN=client-b',
      'cert-serial-number': '0A',
      'x-api-key': keys.tlsB as string,
      authorization: `Bearer ${await token('client-b')}`,
    });
    expect(response.status).toBe(403);
  });

  it('the certificate CN is used whatever the headers say', async () => {
    const response = await get(tlsMode, clientA, {
      'subject-distinguished-name': 'CN=client-b',
      'x-api-key': keys.tlsA as string,
      authorization: `Bearer ${await token('client-a')}`,
    });
    expect(response.status).toBe(200);
  });
});

describe('commonNameOf', () => {
  it.each([
    ['C=GB,O=Example,CN=client-a', 'client-a'],
    ['CN=client-a', 'client-a'],
    ['/C=GB/O=Example/CN=client-a', 'client-a'],
    ['C=GB, O=Example, CN=client-a', 'client-a'],
    ['O=Example', undefined],
    ['CN=a,CN=b', undefined],
    ['CN=', undefined],
  ])('%j → %j', (dn, cn) => {
    expect(commonNameOf(dn)).toBe(cn);
  });
});
