import { beforeAll, describe, expect, it } from 'vitest';
import {
  CertificateFileError,
  certificateAndKey,
  certificateBundle,
  checkCrl,
} from '../../../src/adapters/shared/certificates.js';
import { createCa, type Issued, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { createCrl } from '../../support/crl.js';

const NAMES = { cert: 'TLS_CERT', key: 'TLS_KEY' };
let a: Issued;
let b: Issued;
let caPem: string;
let crl: string;

beforeAll(async () => {
  const ca = await createCa({ commonName: 'checks CA' });
  a = await issueServerCertificate(ca);
  b = await issueServerCertificate(ca);
  caPem = ca.certPem;
  crl = await createCrl(ca, []);
});

describe('certificate file checks', () => {
  it('a certificate and its key: the facts of the certificate', () => {
    const facts = certificateAndKey(NAMES, { cert: a.certPem, key: a.keyPem }, new Date());
    expect(facts).toEqual({
      subject: 'localhost',
      serialNumber: expect.any(String),
      notAfter: expect.any(Date),
    });
    expect(BigInt(`0x${facts.serialNumber}`)).toBe(BigInt(`0x${a.serialNumber}`));
  });

  it('a key of another certificate is refused, naming the variable', () => {
    expect(() => certificateAndKey(NAMES, { cert: a.certPem, key: b.keyPem }, new Date())).toThrow(
      new CertificateFileError('TLS_KEY: is not the key of the certificate in TLS_CERT'),
    );
  });

  it('an expired certificate is refused', () => {
    expect(() =>
      certificateAndKey(NAMES, { cert: a.certPem, key: a.keyPem }, new Date(Date.now() + 3000 * 86_400_000)),
    ).toThrow(/^TLS_CERT: expired at /);
  });

  it('a truncated certificate, a key that is not one, and garbage are refused', () => {
    expect(() =>
      certificateAndKey(NAMES, { cert: a.certPem.slice(0, 300), key: a.keyPem }, new Date()),
    ).toThrow('TLS_CERT: holds no PEM certificate');
    expect(() => certificateAndKey(NAMES, { cert: a.certPem, key: 'nope' }, new Date())).toThrow(
      'TLS_KEY: holds no private key that parses',
    );
    const mangled = a.certPem.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA');
    expect(() => certificateBundle('TLS_CLIENT_CA', mangled)).toThrow(
      'TLS_CLIENT_CA: certificate 1 does not parse',
    );
  });

  it('a CA bundle gives one entry per certificate; one of garbage is refused', () => {
    expect(certificateBundle('TLS_CLIENT_CA', `${caPem}\n${a.certPem}`).map((c) => c.subject)).toEqual([
      'checks CA',
      'localhost',
    ]);
    expect(() => certificateBundle('TLS_CLIENT_CA', 'hello')).toThrow(
      'TLS_CLIENT_CA: holds no PEM certificate',
    );
  });

  it('a CRL file must hold a PEM CRL', () => {
    expect(() => checkCrl('TLS_CRL', crl)).not.toThrow();
    expect(() => checkCrl('TLS_CRL', caPem)).toThrow('TLS_CRL: holds no PEM CRL');
  });
});
