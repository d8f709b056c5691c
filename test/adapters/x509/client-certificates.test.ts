import 'reflect-metadata';
import { webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { x509CertificateRequests } from '../../../src/adapters/x509/certificate-requests.js';
import { LocalCertificateIssuer } from '../../../src/adapters/x509/local-issuer.js';
import { type Ca, createCa } from '../../../src/adapters/x509/pki.js';
import { CertificateRequestError, MAX_CSR_BYTES } from '../../../src/ports/certificate-requests.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const EC = (namedCurve: string) => ({
  name: 'ECDSA',
  namedCurve,
  hash: namedCurve === 'P-384' ? 'SHA-384' : 'SHA-256',
});
const RSA = (modulusLength: number) => ({
  name: 'RSASSA-PKCS1-v1_5',
  modulusLength,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: 'SHA-256',
});

/** A CSR, DER, for `name`, from a fresh key of `algorithm`. */
async function csr(name: string, algorithm: Record<string, unknown> = EC('P-256')): Promise<Uint8Array> {
  const keys = (await webcrypto.subtle.generateKey(algorithm as never, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys,
    signingAlgorithm: algorithm as never,
  });
  return new Uint8Array(request.rawData);
}

async function refusal(request: Uint8Array | string): Promise<string> {
  try {
    await x509CertificateRequests.read(request);
  } catch (error) {
    if (error instanceof CertificateRequestError) return error.problem;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('reading a consumer CSR', () => {
  it.each([
    ['EC P-256', EC('P-256')],
    ['EC P-384', EC('P-384')],
    ['RSA 2048', RSA(2048)],
    ['Ed25519', { name: 'Ed25519' }],
  ])('accepts %s, with its public key and its CN', async (kind, algorithm) => {
    const der = await csr('CN=consumer-a', algorithm);
    const read = await x509CertificateRequests.read(der);
    expect(read.commonName).toBe('consumer-a');
    expect(read.keyKind).toBe(kind);
    expect(Buffer.from(read.der).equals(Buffer.from(der))).toBe(true);
    // As PEM too (the operator's file).
    const pem = x509.PemConverter.encode(der.buffer as ArrayBuffer, 'CERTIFICATE REQUEST');
    expect((await x509CertificateRequests.read(pem)).commonName).toBe('consumer-a');
  });

  it('refuses each bad request, naming what failed', async () => {
    const good = await csr('CN=consumer-a');
    const tampered = new Uint8Array(good);
    tampered[tampered.length - 3] = (tampered[tampered.length - 3] ?? 0) ^ 0xff;
    expect(await refusal(tampered)).toBe('bad-signature');
    expect(await refusal(new Uint8Array(MAX_CSR_BYTES + 1))).toBe('too-large');
    expect(await refusal(new Uint8Array([1, 2, 3]))).toBe('not-a-csr');
    expect(
      await refusal('-----BEGIN CERTIFICATE REQUEST-----\nnope\n-----END CERTIFICATE REQUEST-----'),
    ).toBe('not-a-csr');
    expect(await refusal(await csr('CN=consumer-a', RSA(1024)))).toBe('unsupported-key');
    expect(await refusal(await csr('O=Elsewhere, CN=consumer-a'))).toBe('subject-not-cn-only');
    expect(await refusal(await csr('CN=consumer-a+OU=x'))).toBe('subject-not-cn-only');
    expect(await refusal(await csr('O=only'))).toBe('subject-not-cn-only');
  });

  it('refuses a key whose parameters do not decode, rather than throwing (found by test/property)', async () => {
    const der = await csr('CN=consumer-a');
    // The P-256 key's parameters: OBJECT IDENTIFIER 1.2.840.10045.3.1.7, retagged OCTET STRING.
    const curve = Buffer.from([6, 8, 42, 134, 72, 206, 61, 3, 1, 7]);
    const at = Buffer.from(der).indexOf(curve);
    expect(at).toBeGreaterThan(0);
    const retagged = Uint8Array.from(der, (b, i) => (i === at ? 4 : b));
    expect(await refusal(retagged)).toBe('unsupported-key');
  });
});

describe('the local issuer', () => {
  let ca: Ca;
  let issuer: LocalCertificateIssuer;
  beforeAll(async () => {
    ca = await createCa({ commonName: 'test client CA' });
    issuer = await LocalCertificateIssuer.load(ca.certPem, ca.keyPem);
  });

  it('issues what it decides: CN only, clientAuth, digitalSignature, not a CA, 128-bit serial, its validity', async () => {
    // The CSR asks for more: another subject part is refused before; here a request for CN alone.
    const read = await x509CertificateRequests.read(await csr('CN=consumer-a', RSA(2048)));
    const issued = await issuer.issue({
      commonName: 'consumer-a',
      csrDer: read.der,
      publicKeyDer: read.publicKeyDer,
      days: 90,
    });
    const cert = new X509Certificate(issued.pem);
    expect(cert.subject).toBe('CN=consumer-a');
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(cert.ca).toBe(false);
    expect(
      Buffer.from(cert.publicKey.export({ type: 'spki', format: 'der' })).equals(
        Buffer.from(read.publicKeyDer),
      ),
    ).toBe(true);
    const days = (Date.parse(cert.validTo) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);
    expect(issued.serialNumber).toBe(cert.serialNumber.replace(/^0+/, ''));
    expect(cert.serialNumber.length).toBeGreaterThanOrEqual(31);
    const parsed = new x509.X509Certificate(issued.pem);
    expect(parsed.getExtension(x509.ExtendedKeyUsageExtension)?.usages).toEqual([
      x509.ExtendedKeyUsage.clientAuth,
    ]);
    const usage = parsed.getExtension(x509.KeyUsagesExtension);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(usage?.critical).toBe(true);
    // Two issuances never share a serial.
    const again = await issuer.issue({
      commonName: 'consumer-a',
      csrDer: read.der,
      publicKeyDer: read.publicKeyDer,
      days: 1,
    });
    expect(again.serialNumber).not.toBe(issued.serialNumber);
  });

  it('refuses a key that is not the CA certificate’s, and a certificate that is no CA', async () => {
    const other = await createCa({ commonName: 'another CA' });
    await expect(LocalCertificateIssuer.load(ca.certPem, other.keyPem)).rejects.toThrow(
      'CLIENT_CA_KEY: is not the key of the CA certificate in CLIENT_CA_CERT',
    );
    const leaf = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=not a CA',
      keys: (await webcrypto.subtle.generateKey(EC('P-256') as never, true, ['sign', 'verify'])) as never,
      signingAlgorithm: EC('P-256') as never,
      extensions: [new x509.BasicConstraintsExtension(false)],
    });
    await expect(LocalCertificateIssuer.load(leaf.toString('pem'), ca.keyPem)).rejects.toThrow(/CLIENT_CA/);
  });

  it('answers a certs-only PKCS#7 that reads back as the same certificates', async () => {
    const pkcs7 = x509CertificateRequests.certsOnly([ca.certPem]);
    const back = new x509.X509Certificates(pkcs7);
    expect(back).toHaveLength(1);
    expect(back[0]?.toString('pem')).toBe(new x509.X509Certificate(ca.certPem).toString('pem'));
  });
});

describe('the CSR path handles public keys only', () => {
  // The modules a consumer's CSR passes through, from the wire or the operator's file to the
  // issued certificate. None reads, makes or writes a private key: the consumer's stays with it.
  const CSR_PATH = [
    'src/adapters/x509/certificate-requests.ts',
    'src/adapters/http/est.handlers.ts',
    'src/adapters/http/est.routes.ts',
    'src/domain/certificates/renew.ts',
    'src/app/commands/certs-sign.ts',
    'src/adapters/acm-pca/certificate-issuer.ts',
    'src/ports/certificate-requests.ts',
    'src/ports/certificate-issuer.ts',
  ];
  it.each(CSR_PATH)('%s', async (path) => {
    const { readFileSync } = await import('node:fs');
    const source = readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
    expect(source).not.toMatch(/PRIVATE KEY|pkcs8|createPrivateKey|privateKey|exportKey/);
  });
});
