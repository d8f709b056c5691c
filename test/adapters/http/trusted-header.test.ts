import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonNameOf } from '../../../src/adapters/http/identity.js';
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

const token = (clientId: string, thumbprint?: string) =>
  mintTestToken(pki, clientId, thumbprint ? { certificateThumbprint: thumbprint } : {});

beforeAll(async () => {
  pki = await makeTestPki();
  gateway = await pki.client('gateway');
  clientA = await pki.client('client-a');
  headerMode = await startTestService(pki, { identityMode: 'trusted-header' });
  tlsMode = await startTestService(pki, { identityMode: 'tls' });
  for (const service of [headerMode, tlsMode]) {
    await service.directory.saveClient(AccessMother.client('client-a'));
    await service.directory.saveClient(AccessMother.client('client-b'));
  }
  keys.headerA = (await headerMode.issueKey('client-a')).key;
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
