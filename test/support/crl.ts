import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { Ca } from '../../src/adapters/x509/pki.js';

const DAY = 86_400_000;
/** The CA's own signing algorithm (ECDSA P-256, as `pki init` makes it). */
const SIGN = { name: 'ECDSA', hash: 'SHA-256' };

/**
 * A CRL signed by the CA, listing the given serials (hex): the TLS_CRL file the tests hand
 * to the listener. The service never makes one (`case-read certs revoke` is its revocation).
 */
export async function createCrl(
  ca: Ca,
  serials: readonly string[],
  options: { days?: number } = {},
): Promise<string> {
  const crl = await x509.X509CrlGenerator.create({
    issuer: ca.certificate.subject,
    thisUpdate: new Date(Date.now() - 60_000),
    nextUpdate: new Date(Date.now() + (options.days ?? 30) * DAY),
    entries: serials.map((serialNumber) => ({ serialNumber, revocationDate: new Date(Date.now() - 60_000) })),
    signingKey: ca.privateKey,
    signingAlgorithm: SIGN,
    extensions: [await x509.AuthorityKeyIdentifierExtension.create(ca.certificate, false)],
  });
  // OpenSSL (and so Node's `crl` option) reads only the RFC 7468 label "X509 CRL".
  return x509.PemConverter.encode(crl.rawData, 'X509 CRL');
}
