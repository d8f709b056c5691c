import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjectCommonName } from '../../../src/adapters/http/distinguished-name.js';
import {
  gatewayCommonName,
  SUBJECT_DN_HEADER,
  trustedGatewayIdentity,
  XFCC_HEADER,
} from '../../../src/adapters/http/identity.js';
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

describe('a gateway that forwards the client certificate (ssl-client-cert, or Cert= in x-forwarded-client-cert)', () => {
  // `_forwarded` names the certificate a case forwards, for the reader; the headers carry it.
  const viaGateway = async (
    _forwarded: ClientCredentials,
    dn: string,
    extra: Record<string, string>,
    thumbprint?: string,
  ) =>
    (
      await get(headerMode, gateway, {
        'subject-distinguished-name': dn,
        'x-api-key': keys.headerA as string,
        authorization: `Bearer ${await token('client-a', thumbprint)}`,
        ...extra,
      })
    ).status;
  const escaped = (c: ClientCredentials) => encodeURIComponent(c.certPem);

  it('a certificate-bound token works through the gateway when the certificate is forwarded', async () => {
    const headers = { 'ssl-client-cert': escaped(clientA) };
    expect(await viaGateway(clientA, 'CN=client-a,O=Example', headers, clientA.thumbprint)).toBe(200);
    // The same, as Envoy sends it: the certificate and the subject in x-forwarded-client-cert.
    const xfcc = { 'x-forwarded-client-cert': `Hash=x;Cert="${escaped(clientA)}";Subject="CN=client-a"` };
    expect(await viaGateway(clientA, 'CN=client-a', xfcc, clientA.thumbprint)).toBe(200);
    // Without the certificate the binding cannot be checked: refused, never taken as unbound.
    const serialOnly = { 'cert-serial-number': clientA.serialNumber };
    expect(await viaGateway(clientA, 'CN=client-a', serialOnly, clientA.thumbprint)).toBe(401);
  });

  it('the forwarded certificate must be the one the headers name: another CN or serial has no identity', async () => {
    const clientB = await pki.client('client-b');
    expect(await viaGateway(clientB, 'CN=client-a', { 'ssl-client-cert': escaped(clientB) })).toBe(403);
    expect(
      await viaGateway(clientA, 'CN=client-a', {
        'ssl-client-cert': escaped(clientA),
        'cert-serial-number': '0A1B',
      }),
    ).toBe(403);
    expect(
      await viaGateway(clientA, 'CN=client-a', {
        'ssl-client-cert': escaped(clientA),
        'cert-serial-number': clientA.serialNumber,
      }),
    ).toBe(200);
    // Not a certificate, two certificates, or two different ones in the two headers: refused.
    expect(await viaGateway(clientA, 'CN=client-a', { 'ssl-client-cert': 'not%20a%20certificate' })).toBe(
      403,
    );
    const two = encodeURIComponent(`${clientA.certPem}\n${clientB.certPem}`);
    expect(await viaGateway(clientA, 'CN=client-a', { 'ssl-client-cert': two })).toBe(403);
    expect(
      await viaGateway(clientA, 'CN=client-a', {
        'ssl-client-cert': escaped(clientA),
        'x-forwarded-client-cert': `Cert="${escaped(clientB)}";Subject="CN=client-a"`,
      }),
    ).toBe(403);
  });

  it('a revoked serial is refused through the forwarded certificate too', async () => {
    // A second certificate of client-a, revoked by its serial; the first still works.
    const second = await pki.client('client-a');
    await headerMode.directory.revokeCertificate({
      serialNumber: second.serialNumber,
      clientId: 'client-a',
      revokedAt: new Date(),
    });
    expect(await viaGateway(second, 'CN=client-a', { 'ssl-client-cert': escaped(second) })).toBe(403);
    expect(await viaGateway(clientA, 'CN=client-a', { 'ssl-client-cert': escaped(clientA) })).toBe(200);
  });
});

describe('gatewayCommonName: each DN form read by its own rules, or refused', () => {
  const cnOf = (headers: Record<string, string>) =>
    gatewayCommonName(new Request('https://service.test/', { headers }));
  const dn = (value: string) => cnOf({ [SUBJECT_DN_HEADER]: value });

  it.each([
    ['C=GB,O=Example,CN=client-a', 'client-a'],
    ['CN=client-a', 'client-a'],
    ['C=GB, O=Example, CN=client-a', 'client-a'],
    ['cn=client-a,o=Example', 'client-a'],
    ['/C=GB/O=Example/CN=client-a', 'client-a'],
    ['/CN=client-a', 'client-a'],
    // RFC 4514 escapes: the value is what the certificate holds, never a second RDN.
    ['CN=client-b\\,x,O=Example', 'client-b,x'],
    ['CN=client-b/x,O=Example', 'client-b/x'],
    ['CN=a\\+b,O=Example', 'a+b'],
    ['CN=say \\"hi\\",O=Example', 'say "hi"'],
    ['CN=back\\\\slash', 'back\\slash'],
    ['CN=caf\\C3\\A9', 'café'],
    ['CN=a=b', 'a=b'],
  ])('%j → %j', (value, cn) => {
    expect(dn(value)).toBe(cn);
  });

  it.each([
    ['O=Example', 'no CN'],
    ['CN=a,CN=b', 'two CNs'],
    ['CN=client-a,O=x,CN=client-b', 'two CNs'],
    ['CN=', 'an empty CN'],
    ['CN=client-b+OU=x,O=Example', 'a CN in a multi-valued RDN'],
    ['OU=x+CN=client-b', 'a CN in a multi-valued RDN'],
    ['CN="client-b"', 'a quoted value'],
    ['CN=client-b;O=x', 'the old ";" separator'],
    ['CN=client-b,', 'a trailing separator'],
    ['CN=client\\b', 'a backslash escaping nothing'],
    ['CN=\\C3\\28', 'bytes that are not UTF-8'],
    ['CN=#04026162', 'a hex value'],
    ['client-b', 'no "="'],
    ['C N=client-b', 'a type that is not one'],
    ['', 'empty'],
    // The legacy form cannot escape: what a "/" or "+" in a value would make of it is refused.
    ['/C=GB/O=Example/CN=client-b/x', 'a "/" in the CN'],
    ['/C=GB/O=Example/CN=client-b/O=x', 'the CN not last'],
    ['/CN=client-b+OU=x', 'a CN in a multi-valued RDN'],
    ['/CN=a/CN=b', 'two CNs'],
    ['/C=GB/O=Exa\\x6Dple/CN=client-b', 'a backslash'],
    ['/C=GB/Bogus=x/CN=client-b', 'an unknown type'],
    ['/C=GB//CN=client-b', 'an empty segment'],
  ])('%j is refused (%s)', (value) => {
    expect(dn(value)).toBeUndefined();
  });

  it("reads what HTTP cannot carry as the parser's rules say (spaces at the ends, control characters)", () => {
    // A header value loses its outer spaces in transit, so these are checked on the parser.
    expect(subjectCommonName('CN=\\ padded\\ ')).toEqual({ commonName: ' padded ' });
    expect(subjectCommonName('CN=client-b ')).toHaveProperty('problem');
    // A character outside the BMP, as it is and escaped as UTF-8 bytes: the same CN.
    expect(subjectCommonName('CN=client-🙂,O=Example')).toEqual({ commonName: 'client-🙂' });
    expect(subjectCommonName('CN=client-\\F0\\9F\\99\\82')).toEqual({ commonName: 'client-🙂' });
    expect(subjectCommonName('CN=client-b\u0000x')).toHaveProperty('problem');
    expect(subjectCommonName('/CN=client-b\u0007')).toHaveProperty('problem');
  });

  it('keeps a byte-order mark at the start of a value: a CN that begins with one is another CN (found by test/property)', () => {
    // The UTF-8 decoder dropped a leading U+FEFF, so "\uFEFFclient-b" read as "client-b".
    expect(subjectCommonName('CN=\uFEFFclient-b')).toEqual({ commonName: '\uFEFFclient-b' });
    expect(subjectCommonName('O=Example,CN=\\EF\\BB\\BFclient-b')).toEqual({ commonName: '\uFEFFclient-b' });
    expect(subjectCommonName('CN=\uFEFF')).toEqual({ commonName: '\uFEFF' });
  });

  it("reads Envoy's x-forwarded-client-cert Subject, quoted, with escaped quotes", () => {
    const xfcc = (value: string) => cnOf({ [XFCC_HEADER]: value });
    expect(xfcc('By=spiffe://gw;Hash=abc;Subject="CN=client-a,O=Example,C=GB";URI=')).toBe('client-a');
    expect(xfcc('Hash=abc;Subject="CN=client-b\\,x,O=Example"')).toBe('client-b,x');
    // Envoy writes a quote in the value as \": the RFC 4514 escape \" arrives as \\".
    expect(xfcc('Subject="CN=say \\\\"hi\\\\",O=Example"')).toBe('say "hi"');
    // Two hops' certificates, a repeated key, no Subject, an open quote: refused.
    expect(xfcc('Subject="CN=client-a",Subject="CN=client-b"')).toBeUndefined();
    expect(xfcc('Subject="CN=client-a";Subject="CN=client-b"')).toBeUndefined();
    expect(xfcc('Hash=abc')).toBeUndefined();
    expect(xfcc('Subject="CN=client-a')).toBeUndefined();
    expect(xfcc('Subject="CN=client-a"x')).toBeUndefined();
    // Both headers: they must agree.
    expect(cnOf({ [SUBJECT_DN_HEADER]: 'CN=client-a', [XFCC_HEADER]: 'Subject="CN=client-a"' })).toBe(
      'client-a',
    );
    expect(
      cnOf({ [SUBJECT_DN_HEADER]: 'CN=client-a', [XFCC_HEADER]: 'Subject="CN=client-b"' }),
    ).toBeUndefined();
  });
});
