import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { ClientCertificate } from '../../domain/access/model.js';
import { subjectCommonName, xfccElement } from './distinguished-name.js';

/**
 * The client identity for a request: from the verified TLS peer certificate (the Node
 * adapter supplies that reader) or, only when configured, from headers set by a trusted
 * TLS-terminating gateway.
 */
export type IdentityReader = (request: Request, env: unknown) => ClientCertificate | undefined;

export const SUBJECT_DN_HEADER = 'subject-distinguished-name';
export const SERIAL_HEADER = 'cert-serial-number';
export const XFCC_HEADER = 'x-forwarded-client-cert';
/** The client certificate a gateway forwards, PEM URL-escaped (nginx `$ssl_client_escaped_cert`). */
export const CERT_HEADER = 'ssl-client-cert';

/** Reads a forwarded certificate (URL-escaped PEM); undefined when it is not exactly one readable certificate. */
export type ForwardedCertificateReader = (escaped: string) => ClientCertificate | undefined;

/** The longest subject header read; longer is refused (no real subject is near it). */
const MAX_HEADER = 4096;
/** The longest forwarded certificate read (a PEM client certificate, URL-escaped, is 1–3 KiB). */
const MAX_CERT_HEADER = 16_384;
/** `x-forwarded-client-cert` may carry the certificate as well as the subject. */
const MAX_XFCC = MAX_HEADER + MAX_CERT_HEADER;

/**
 * The CN a gateway states: in `subject-distinguished-name` (RFC 4514/2253, or the OpenSSL
 * legacy form when it starts with `/`) and/or in Envoy's `x-forwarded-client-cert`
 * `Subject`. Each is read by the rules of its form (see distinguished-name.ts); when both
 * are sent they must name the same CN. Anything malformed or ambiguous has no CN.
 */
export function gatewayCommonName(request: Request): string | undefined {
  const dn = request.headers.get(SUBJECT_DN_HEADER);
  const xfcc = request.headers.get(XFCC_HEADER);
  if ((dn ?? '').length > MAX_HEADER || (xfcc ?? '').length > MAX_XFCC) return undefined;
  const names: string[] = [];
  if (dn !== null) {
    const read = subjectCommonName(dn);
    if ('problem' in read) return undefined;
    names.push(read.commonName);
  }
  if (xfcc !== null) {
    const element = xfccElement(xfcc);
    const subject = 'problem' in element ? undefined : element.pairs.get('subject');
    if (subject === undefined) return undefined;
    const read = subjectCommonName(subject);
    if ('problem' in read) return undefined;
    names.push(read.commonName);
  }
  const [first] = names;
  return first !== undefined && names.every((name) => name === first) ? first : undefined;
}

/** The URL-escaped PEM a gateway forwards: `ssl-client-cert`, or `Cert=` in `x-forwarded-client-cert`. */
function forwardedPemOf(request: Request): string | null | undefined {
  const own = request.headers.get(CERT_HEADER);
  const xfcc = request.headers.get(XFCC_HEADER);
  const element = xfcc === null || xfcc.length > MAX_XFCC ? undefined : xfccElement(xfcc);
  const inXfcc = element === undefined || 'problem' in element ? undefined : element.pairs.get('cert');
  if (own !== null && inXfcc !== undefined && own !== inXfcc) return undefined;
  const pem = own ?? inXfcc ?? null;
  return pem !== null && pem.length > MAX_CERT_HEADER ? undefined : pem;
}

/**
 * The identity a gateway states: its CN (see {@link gatewayCommonName}) and
 * `cert-serial-number`. When it also forwards the certificate, the identity is the
 * certificate's (CN, serial and RFC 8705 thumbprint, so certificate-bound tokens work
 * behind it), and the stated CN and serial must be the certificate's.
 */
function identityFromHeaders(
  request: Request,
  forwarded: ForwardedCertificateReader,
): ClientCertificate | undefined {
  const serial = request.headers.get(SERIAL_HEADER);
  const commonName = gatewayCommonName(request);
  if (commonName === undefined) return undefined;
  const pem = forwardedPemOf(request);
  if (pem === undefined) return undefined;
  if (pem !== null) {
    const certificate = forwarded(pem);
    if (certificate === undefined || certificate.commonName !== commonName) return undefined;
    if (serial !== null && CertificateSerial.tryParse(serial) !== certificate.serialNumber) return undefined;
    return certificate;
  }
  const serialNumber = serial === null ? undefined : CertificateSerial.tryParse(serial);
  if (serialNumber === undefined) return undefined;
  return { commonName, serialNumber, thumbprintS256: null, notAfter: null };
}

/**
 * `IDENTITY_MODE=trusted-header`: the identity headers count only on a connection whose own
 * verified client certificate has a CN in `gateways`. Such a gateway must strip the headers
 * from what its clients send and set them from the certificate it verified; a gateway
 * request without valid headers has no identity (403), since a gateway is not a client.
 *
 * Any other peer is judged on its own verified certificate, exactly as in `tls` mode: the
 * headers it sends are ignored, so holding a valid certificate never lets one client speak
 * as another. A connection with no verified certificate has no identity at all.
 */
export function trustedGatewayIdentity(
  gateways: ReadonlySet<string>,
  peer: IdentityReader,
  /** Reads a forwarded certificate; without it, a request that forwards one has no identity. */
  forwarded: ForwardedCertificateReader = () => undefined,
): IdentityReader {
  if (gateways.size === 0) throw new Error('trusted-header identity needs at least one trusted gateway');
  return (request, env) => {
    const own = peer(request, env);
    if (own === undefined) return undefined;
    return gateways.has(own.commonName) ? identityFromHeaders(request, forwarded) : own;
  };
}
