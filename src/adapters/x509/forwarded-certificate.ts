import 'reflect-metadata';
import { createHash } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { LRUCache } from 'lru-cache';
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { ClientCertificate } from '../../domain/access/model.js';

/**
 * A client certificate a trusted gateway forwards (nginx `$ssl_client_escaped_cert`, Envoy
 * `x-forwarded-client-cert` `Cert=`): PEM, URL-escaped. Read with @peculiar/x509, whose
 * subject is the certificate's own structure (not a printed string, which every runtime
 * prints differently), so the CN, the serial and the RFC 8705 thumbprint are the
 * certificate's. Exactly one certificate, exactly one CN alone in its RDN; anything else
 * has no identity. The gateway verified the certificate; this reads it, it does not verify.
 */
export function forwardedCertificate(escaped: string): ClientCertificate | undefined {
  let pem: string;
  try {
    pem = decodeURIComponent(escaped);
  } catch {
    return undefined;
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----/g) ?? [];
  if (blocks.length !== 1) return undefined;
  let certificate: x509.X509Certificate;
  try {
    certificate = new x509.X509Certificate(pem);
  } catch {
    return undefined;
  }
  const rdns = certificate.subjectName.toJSON();
  const withCn = rdns.filter((rdn) => 'CN' in rdn);
  if (withCn.length !== 1) return undefined;
  const [rdn] = withCn as [Record<string, string[]>];
  const values = rdn.CN ?? [];
  if (Object.keys(rdn).length !== 1 || values.length !== 1 || values[0] === '') return undefined;
  const serialNumber = CertificateSerial.tryParse(certificate.serialNumber);
  if (serialNumber === undefined) return undefined;
  return {
    commonName: values[0] as string,
    serialNumber,
    thumbprintS256: createHash('sha256').update(new Uint8Array(certificate.rawData)).digest('base64url'),
    notAfter: certificate.notAfter,
  };
}

/**
 * {@link forwardedCertificate} with the last `max` answers kept (least recently used
 * dropped): a client's requests through a gateway forward the same certificate every time,
 * so it is read once, not per request.
 */
export function cachedForwardedCertificates(max = 1000): (escaped: string) => ClientCertificate | undefined {
  // A certificate that does not read is remembered too: it will not read next time either.
  const cache = new LRUCache<string, ClientCertificate | typeof UNREADABLE>({ max });
  return (escaped) => {
    const known = cache.get(escaped);
    if (known !== undefined) return known === UNREADABLE ? undefined : known;
    const read = forwardedCertificate(escaped);
    cache.set(escaped, read ?? UNREADABLE);
    return read;
  };
}

const UNREADABLE = Symbol('unreadable');
