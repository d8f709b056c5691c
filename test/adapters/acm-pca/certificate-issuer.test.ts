import 'reflect-metadata';
import { X509Certificate as NodeX509Certificate, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AcmPcaCertificateIssuer } from '../../../src/adapters/acm-pca/certificate-issuer.js';
import {
  CertificateIssuerError,
  type ClientCertificateOrder,
} from '../../../src/ports/certificate-issuer.js';
import type { Deadline } from '../../../src/ports/deadline.js';
import type { OutgoingTracing } from '../../../src/ports/tracing.js';
import { acmPcaIssuerFor, FAKE_CA_ARN, FakeAcmPca, SECRET_ACCOUNT } from '../../support/fake-acm-pca.js';

const pca = new FakeAcmPca();
let endpoint: string;
let issuer: AcmPcaCertificateIssuer;
const DAY = 86_400_000;

/** A consumer's order: a fresh P-256 key and a real CSR for `CN=<commonName>`. */
async function order(commonName = 'client-a', days = 30): Promise<ClientCertificateOrder> {
  const keys = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
  });
  return {
    commonName,
    csrDer: new Uint8Array(csr.rawData),
    publicKeyDer: new Uint8Array(await webcrypto.subtle.exportKey('spki', keys.publicKey)),
    days,
  };
}

function deadlineIn(ms: number): Deadline {
  const expiresAt = performance.now() + ms;
  return {
    expiresAt,
    signal: AbortSignal.timeout(ms),
    get passed() {
      return performance.now() >= expiresAt;
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<CertificateIssuerError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CertificateIssuerError);
  return error as CertificateIssuerError;
}

beforeAll(async () => {
  endpoint = await pca.start();
});
afterAll(async () => {
  issuer?.close();
  await pca.stop();
});
beforeEach(() => {
  pca.calls.length = 0;
  pca.behaviour = 'success';
  pca.inProgressAnswers = 1;
  pca.caArn = FAKE_CA_ARN;
  issuer?.close();
  issuer = acmPcaIssuerFor(endpoint);
});

describe('AcmPcaCertificateIssuer against a stand-in ACM PCA (the real @aws-sdk/client-acm-pca client)', () => {
  it('issues a clientAuth certificate for the CSR key and CN, signed by the CA', async () => {
    const ordered = await order('client-a', 30);
    const before = Date.now();
    const issued = await issuer.issue(ordered);

    const certificate = new x509.X509Certificate(issued.pem);
    expect(certificate.subject).toBe('CN=client-a');
    expect(certificate.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([
      x509.ExtendedKeyUsage.clientAuth,
    ]);
    expect(Buffer.from(certificate.publicKey.rawData).equals(Buffer.from(ordered.publicKeyDer))).toBe(true);
    expect(await certificate.verify({ publicKey: pca.ca.certificate.publicKey, signatureOnly: true })).toBe(
      true,
    );

    // The serial as the access directory stores it (the stand-in's start with a zero nibble).
    expect(certificate.serialNumber).toMatch(/^0/);
    expect(issued.serialNumber).toBe(certificate.serialNumber.toUpperCase().replace(/^0+/, ''));
    expect(issued.serialNumber).toBe(new NodeX509Certificate(issued.pem).serialNumber.replace(/^0+/, ''));
    expect(issued.serialNumber).toMatch(/^[1-9A-F][0-9A-F]*$/);
    expect(issued.notAfter.getTime()).toBe(certificate.notAfter.getTime());
    expect(issued.notAfter.getTime() - before).toBeGreaterThan(30 * DAY - 120_000);
    expect(issued.notAfter.getTime() - before).toBeLessThan(30 * DAY + 120_000);
    expect(issued.pem).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
  });

  it('sends a signed IssueCertificate: template, DAYS validity, the CA key’s algorithm, a token, the CSR as PEM', async () => {
    const ordered = await order('client-b', 90);
    await issuer.issue(ordered);
    const [call, ...others] = pca.callsOf('IssueCertificate');
    expect(others).toHaveLength(0);
    expect(call?.headers['x-amz-target']).toBe('ACMPrivateCA.IssueCertificate');
    expect(call?.headers['content-type']).toMatch(/^application\/x-amz-json-1\.1/);
    expect(call?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-2\/acm-pca\/aws4_request, /,
    );
    const body = call?.body ?? {};
    expect(body.CertificateAuthorityArn).toBe(FAKE_CA_ARN);
    expect(body.TemplateArn).toBe('arn:aws:acm-pca:::template/EndEntityClientAuthCertificate/V1');
    expect(body.Validity).toEqual({ Type: 'DAYS', Value: 90 });
    expect(body.SigningAlgorithm).toBe('SHA256WITHECDSA');
    expect(body.IdempotencyToken).toEqual(expect.any(String));
    expect((body.IdempotencyToken as string).length).toBeGreaterThan(0);
    expect((body.IdempotencyToken as string).length).toBeLessThanOrEqual(36);
    const csrPem = Buffer.from(body.Csr as string, 'base64').toString('ascii');
    expect(csrPem).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n/);
    expect(csrPem).toMatch(/\n-----END CERTIFICATE REQUEST-----\n$/);
    expect(csrPem.split('\n').every((line) => line.length <= 64)).toBe(true);
    expect(Buffer.from(x509.PemConverter.decodeFirst(csrPem)).equals(Buffer.from(ordered.csrDer))).toBe(true);
    expect(Object.keys(body).sort()).toEqual([
      'CertificateAuthorityArn',
      'Csr',
      'IdempotencyToken',
      'SigningAlgorithm',
      'TemplateArn',
      'Validity',
    ]);

    await issuer.issue(await order('client-b'));
    const tokens = pca.callsOf('IssueCertificate').map((c) => c.body.IdempotencyToken);
    expect(new Set(tokens).size).toBe(2);
  });

  it('asks GetCertificate again after RequestInProgressException, and describes the CA once', async () => {
    await issuer.issue(await order());
    expect(pca.calls.map((c) => c.operation)).toEqual([
      'DescribeCertificateAuthority',
      'IssueCertificate',
      'GetCertificate',
      'GetCertificate',
    ]);
    const arn = pca.callsOf('GetCertificate')[0]?.body.CertificateArn;
    expect(arn).toMatch(/^arn:aws:acm-pca:.*\/certificate\/[0-9a-f]{32}$/);
    expect(pca.callsOf('GetCertificate')[1]?.body.CertificateArn).toBe(arn);

    pca.calls.length = 0;
    await issuer.issue(await order());
    expect(pca.calls.map((c) => c.operation)).toEqual([
      'IssueCertificate',
      'GetCertificate',
      'GetCertificate',
    ]);
  });

  it('backs off between polls: 50, 100, 200 ms before the fourth GetCertificate', async () => {
    pca.inProgressAnswers = 3;
    const patient = acmPcaIssuerFor(endpoint, { timeoutMs: 5_000 });
    try {
      await patient.issue(await order()); // describes the CA first
      pca.calls.length = 0;
      const started = performance.now();
      await patient.issue(await order());
      expect(performance.now() - started).toBeGreaterThanOrEqual(340);
      expect(pca.callsOf('GetCertificate')).toHaveLength(4);
    } finally {
      patient.close();
    }
  });

  it('takes the template partition from the CA ARN', async () => {
    const govArn = FAKE_CA_ARN.replace('arn:aws:', 'arn:aws-us-gov:').replace('eu-west-2', 'us-gov-west-1');
    pca.caArn = govArn;
    const gov = acmPcaIssuerFor(endpoint, { arn: govArn });
    try {
      await gov.issue(await order());
      expect(pca.callsOf('IssueCertificate')[0]?.body.TemplateArn).toBe(
        'arn:aws-us-gov:acm-pca:::template/EndEntityClientAuthCertificate/V1',
      );
    } finally {
      gov.close();
    }
  });

  it('refuses a CA ARN that is not an ACM PCA CA, without repeating it', () => {
    expect(() => acmPcaIssuerFor(endpoint, { arn: `arn:aws:iam::${SECRET_ACCOUNT}:role/x` })).toThrow(
      /^(?!.*\d{12}).*not a certificate-authority ARN/,
    );
  });

  it('returns the CA certificate (and its chain), asked once', async () => {
    const certificates = await issuer.caCertificates();
    expect(certificates).toHaveLength(1);
    expect(certificates[0]?.trim()).toBe(pca.ca.certPem.trim());
    expect(pca.calls.map((c) => c.operation)).toEqual(['GetCertificateAuthorityCertificate']);
    expect(await issuer.caCertificates()).toBe(certificates);
    expect(pca.calls).toHaveLength(1);
  });

  it('access-denied → CertificateIssuerError naming the error and status, nothing of the AWS text', async () => {
    pca.behaviour = 'access-denied';
    for (const error of [
      await failure(issuer.issue(await order())),
      await failure(issuer.caCertificates()),
    ]) {
      expect(error.label).toBe('AccessDeniedException (400)');
      expect(error.timedOut).toBe(false);
      const everything = JSON.stringify({ ...error, message: error.message, stack: error.stack });
      expect(everything).not.toContain(SECRET_ACCOUNT);
      expect(everything).not.toContain('arn:');
    }
    // Nothing was cached from the failures.
    pca.behaviour = 'success';
    pca.calls.length = 0;
    await issuer.issue(await order());
    expect(pca.calls[0]?.operation).toBe('DescribeCertificateAuthority');
  });

  it('a hang → CertificateIssuerError timedOut, within the timeout (+ margin)', async () => {
    pca.behaviour = 'hang';
    const ordered = await order();
    for (const call of [() => issuer.issue(ordered), () => issuer.caCertificates()]) {
      const started = performance.now();
      const error = await failure(call());
      const elapsed = performance.now() - started;
      expect(error.timedOut).toBe(true);
      expect(error.label).toBe('timeout');
      expect(elapsed).toBeGreaterThanOrEqual(390);
      expect(elapsed).toBeLessThan(400 + 600);
    }
  });

  it('a deadline shorter than the timeout wins', async () => {
    pca.behaviour = 'hang';
    const patient = acmPcaIssuerFor(endpoint, { timeoutMs: 10_000 });
    try {
      const started = performance.now();
      const error = await failure(patient.issue(await order(), deadlineIn(150)));
      expect(error.timedOut).toBe(true);
      expect(error.label).toBe('deadline');
      expect(performance.now() - started).toBeLessThan(150 + 600);
    } finally {
      patient.close();
    }
  });

  it('the timeout bounds the polling too: a certificate forever in progress times out', async () => {
    pca.inProgressAnswers = Number.POSITIVE_INFINITY;
    const started = performance.now();
    const error = await failure(issuer.issue(await order()));
    expect(error.timedOut).toBe(true);
    expect(performance.now() - started).toBeLessThan(400 + 600);
    const polls = pca.callsOf('GetCertificate').length;
    expect(polls).toBeGreaterThanOrEqual(3); // 0, 50, 150, 350 ms
    expect(polls).toBeLessThanOrEqual(6);
  });

  it.each([
    { behaviour: 'wrong-key', what: 'a key other than the CSR’s' },
    { behaviour: 'wrong-name', what: 'another CN' },
  ] as const)('$behaviour ($what) → refused: unexpected-certificate', async ({ behaviour }) => {
    pca.behaviour = behaviour;
    const error = await failure(issuer.issue(await order()));
    expect(error.label).toBe('unexpected-certificate');
    expect(error.timedOut).toBe(false);
    expect(pca.callsOf('GetCertificate').length).toBeGreaterThan(0); // issued, then refused
  });

  it('with the default two attempts, the SDK retries neither RequestInProgress nor AccessDenied', async () => {
    const defaults = new AcmPcaCertificateIssuer({
      arn: FAKE_CA_ARN,
      region: 'eu-west-2',
      endpoint,
      timeoutMs: 2_000,
      credentials: {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      },
    });
    try {
      await defaults.issue(await order());
      expect(pca.calls.map((c) => c.operation)).toEqual([
        'DescribeCertificateAuthority',
        'IssueCertificate',
        'GetCertificate',
        'GetCertificate',
      ]);
      pca.calls.length = 0;
      pca.behaviour = 'access-denied';
      await failure(defaults.caCertificates());
      expect(pca.calls).toHaveLength(1);
    } finally {
      defaults.close();
    }
  });

  it('traces each call and carries the trace context in its headers', async () => {
    const spans: string[] = [];
    const tracing: OutgoingTracing = {
      outgoing: (name, _attributes, call) => {
        spans.push(name);
        return call();
      },
      inject: (headers) => {
        headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      },
    };
    const traced = acmPcaIssuerFor(endpoint, { tracing });
    try {
      await traced.issue(await order());
      expect(spans).toEqual([
        'ACM-PCA DescribeCertificateAuthority',
        'ACM-PCA IssueCertificate',
        'ACM-PCA GetCertificate',
        'ACM-PCA GetCertificate',
      ]);
      expect(pca.calls.every((c) => String(c.headers.traceparent).startsWith('00-0af76519'))).toBe(true);
    } finally {
      traced.close();
    }
  });
});

describe('the stand-in ACM PCA', () => {
  it('refuses an unsigned request as AWS would', async () => {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'ACMPrivateCA.GetCertificateAuthorityCertificate',
      },
      body: JSON.stringify({ CertificateAuthorityArn: FAKE_CA_ARN }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ __type: 'MissingAuthenticationTokenException' });
  });
});
