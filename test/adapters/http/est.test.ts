import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeadlineOptions } from '../../../src/adapters/http/request-cycle.js';
import { x509CertificateRequests } from '../../../src/adapters/x509/certificate-requests.js';
import { LocalCertificateIssuer } from '../../../src/adapters/x509/local-issuer.js';
import { type CertificateIssuer, CertificateIssuerError } from '../../../src/ports/certificate-issuer.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { type RunningTestService, startTestService } from '../../support/service.js';

/**
 * EST renewal through the real listener and perimeter, in process (decisions §12): what the
 * consumer life in test/e2e/certificate-renewal.test.ts cannot easily show — two renewals at
 * once, an issuer that fails, no issuer at all, and the expiry header's window.
 */
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const DAY = 86_400_000;
let pki: TestPki;
beforeAll(async () => {
  pki = await makeTestPki();
});
afterAll(() => pki?.cleanup());

/** The base64 of a DER CSR for `cn`, from a fresh EC P-256 key. */
async function csrFor(cn: string): Promise<string> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${cn}`,
    keys: keys as never,
    signingAlgorithm: algorithm,
  });
  return Buffer.from(request.rawData).toString('base64');
}

interface Started {
  readonly service: RunningTestService;
  readonly key: string;
  readonly outcomes: string[];
}

/** A service offering no renewal (no issuer configured), with a client `renewer`. */
async function startWithout(): Promise<Started> {
  const service = await startTestService(pki, { renewWithinDays: 30 });
  await service.directory.saveClient(
    AccessMother.client('renewer', { permissions: ['getCase', 'renewCertificate'] }),
  );
  const { key } = await service.issueKey('renewer');
  return { service, key, outcomes: [] };
}

function renew(started: Started, as: ClientCredentials, body: string) {
  return httpsRequest(`${started.service.url}/.well-known/est/simplereenroll`, {
    method: 'POST',
    ca: pki.ca.certPem,
    cert: as.certPem,
    key: as.keyPem,
    headers: {
      'x-api-key': started.key,
      'content-type': 'application/pkcs10',
      'content-length': String(body.length),
    },
    body,
  });
}

const inWindow = () => pki.client('renewer', { notAfter: new Date(Date.now() + 10 * DAY) });

describe('EST renewal in process', () => {
  it('without an issuer: 501 renewal-not-configured on both routes, nothing read', async () => {
    const started = await startWithout();
    try {
      const as = await inWindow();
      const answer = await renew(started, as, await csrFor('renewer'));
      expect([answer.status, (answer.json() as { type: string }).type]).toEqual([
        501,
        'urn:case-read:problem:renewal-not-configured',
      ]);
      const cacerts = await httpsRequest(`${started.service.url}/.well-known/est/cacerts`, {
        ca: pki.ca.certPem,
        cert: as.certPem,
        key: as.keyPem,
        headers: { 'x-api-key': started.key },
      });
      expect(cacerts.status).toBe(501);
    } finally {
      await started.service.close();
    }
  });

  it('two renewals of one certificate at once: exactly one is issued, the other is 409 already-renewed', async () => {
    const issuer = await LocalCertificateIssuer.load(pki.ca.certPem, pki.ca.keyPem);
    const started = await startWithDirectory(issuer);
    try {
      const as = await inWindow();
      const answers = await Promise.all([
        renew(started, as, await csrFor('renewer')),
        renew(started, as, await csrFor('renewer')),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      expect(started.outcomes.sort()).toEqual(['already-renewed', 'issued']);
    } finally {
      await started.service.close();
    }
  });

  it('a body past the limit is refused 413, counted as too-large, whether its length is declared or chunked', async () => {
    const issuer = await LocalCertificateIssuer.load(pki.ca.certPem, pki.ca.keyPem);
    const started = await startWithDirectory(issuer);
    try {
      const as = await inWindow();
      const big = 'A'.repeat(200_000);
      for (const length of [{ 'content-length': String(big.length) }, { 'transfer-encoding': 'chunked' }]) {
        const answer = await httpsRequest(`${started.service.url}/.well-known/est/simplereenroll`, {
          method: 'POST',
          ca: pki.ca.certPem,
          cert: as.certPem,
          key: as.keyPem,
          headers: { 'x-api-key': started.key, 'content-type': 'application/pkcs10', ...length },
          body: big,
        });
        expect([answer.status, (answer.json() as { type: string }).type]).toEqual([
          413,
          'urn:case-read:problem:request-too-large',
        ]);
      }
      expect(started.outcomes).toEqual(['too-large', 'too-large']);
    } finally {
      await started.service.close();
    }
  });

  it('a body is base64 as RFC 4648 writes it, and any CSR within the size limit fits the body limit (found by test/property)', async () => {
    const issuer = await LocalCertificateIssuer.load(pki.ca.certPem, pki.ca.keyPem);
    const started = await startWithDirectory(issuer);
    try {
      const as = await inWindow();
      const type = (answer: { status: number; json(): unknown }) => [
        answer.status,
        (answer.json() as { type: string }).type,
      ];
      const csr = await csrFor('renewer');
      // A stray character after the base64: Node's decoder dropped it and read the CSR.
      expect(type(await renew(started, as, `${csr}A`))).toEqual([
        400,
        'urn:case-read:problem:bad-certificate-request',
      ]);
      // The largest request allowed, in PEM's 64-character lines ending in CRLF: read (and
      // refused as no CSR), not turned away as too large.
      const largest = (
        Buffer.alloc(16 * 1024)
          .toString('base64')
          .match(/.{1,64}/g) ?? []
      ).join('\r\n');
      expect(type(await renew(started, as, `${largest}\r\n`))).toEqual([
        400,
        'urn:case-read:problem:bad-certificate-request',
      ]);
      expect((await renew(started, as, csr)).status).toBe(200);
    } finally {
      await started.service.close();
    }
  });

  it('an issuer that fails: 502, the claim given back, so the next try renews', async () => {
    const real = await LocalCertificateIssuer.load(pki.ca.certPem, pki.ca.keyPem);
    let fail = true;
    const flaky: CertificateIssuer = {
      issue: (order) =>
        fail ? Promise.reject(new CertificateIssuerError('ServiceUnavailable (503)')) : real.issue(order),
      caCertificates: () => real.caCertificates(),
    };
    const started = await startWithDirectory(flaky);
    try {
      const as = await inWindow();
      const failed = await renew(started, as, await csrFor('renewer'));
      expect([failed.status, (failed.json() as { type: string }).type]).toEqual([
        502,
        'urn:case-read:problem:upstream-failed',
      ]);
      expect(failed.text).not.toContain('ServiceUnavailable');
      fail = false;
      const renewed = await renew(started, as, await csrFor('renewer'));
      expect(renewed.status).toBe(200);
      expect(renewed.headers['content-type']).toBe('application/pkcs7-mime; smime-type=certs-only');
      const certificates = new x509.X509Certificates(Buffer.from(renewed.text.replace(/\s+/g, ''), 'base64'));
      expect(certificates[0]?.subject).toBe('CN=renewer');
    } finally {
      await started.service.close();
    }
  });

  it('an issuance that ends after the deadline: 503, and the claim given back, so the consumer can renew again', async () => {
    const real = await LocalCertificateIssuer.load(pki.ca.certPem, pki.ca.keyPem);
    let slow = true;
    const late: CertificateIssuer = {
      issue: async (order) => {
        // Slower than the deadline, then issued all the same (a CA that took its time).
        if (slow) await new Promise((resolve) => setTimeout(resolve, 600));
        return real.issue(order);
      },
      caCertificates: () => real.caCertificates(),
    };
    const started = await startWithDirectory(late, { requestMs: 300, maxInFlight: 16 });
    try {
      const as = await inWindow();
      const first = await renew(started, as, await csrFor('renewer'));
      expect(first.status).toBe(503);
      // The late certificate was never delivered: the claim is free again once it is issued.
      await new Promise((resolve) => setTimeout(resolve, 500));
      slow = false;
      const again = await renew(started, as, await csrFor('renewer'));
      expect(again.status).toBe(200);
    } finally {
      await started.service.close();
    }
  });

  it('Client-Certificate-Expires: on every answer inside the window, on none outside it', async () => {
    const started = await startWithout();
    try {
      const read = async (as: ClientCredentials) =>
        httpsRequest(`${started.service.url}/openapi.json`, {
          ca: pki.ca.certPem,
          cert: as.certPem,
          key: as.keyPem,
          headers: { 'x-api-key': started.key },
        });
      const near = await read(await inWindow());
      expect(near.headers['client-certificate-expires']).toMatch(/ GMT$/);
      const far = await read(await pki.client('renewer', { notAfter: new Date(Date.now() + 60 * DAY) }));
      expect(far.headers['client-certificate-expires']).toBeUndefined();
    } finally {
      await started.service.close();
    }
  });
});

/** A service whose renewals are claimed in its own in-memory access directory. */
async function startWithDirectory(issuer: CertificateIssuer, deadlines?: DeadlineOptions): Promise<Started> {
  const outcomes: string[] = [];
  // The test service's directory is made inside; the EST deps take it by reference.
  const holder: { directory?: RunningTestService['directory'] } = {};
  const service = await startTestService(pki, {
    certificates: {
      issuer,
      requests: x509CertificateRequests,
      directory: {
        claimRenewal: (claim) => (holder.directory as RunningTestService['directory']).claimRenewal(claim),
        completeRenewal: (serial, issued) =>
          (holder.directory as RunningTestService['directory']).completeRenewal(serial, issued),
      },
      days: 90,
      renewWithinDays: 30,
      now: () => new Date(),
      observeRenewal: (outcome) => outcomes.push(outcome),
    },
    renewWithinDays: 30,
    ...(deadlines ? { deadlines } : {}),
  });
  holder.directory = service.directory;
  await service.directory.saveClient(
    AccessMother.client('renewer', { permissions: ['getCase', 'renewCertificate'] }),
  );
  const { key } = await service.issueKey('renewer');
  return { service, key, outcomes };
}
