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

/** The identity headers a gateway sent, each read once; `xfcc` is the one element of `x-forwarded-client-cert`. */
interface GatewayHeaders {
  readonly dn: string | null;
  readonly xfcc: ReadonlyMap<string, string> | null;
  readonly cert: string | null;
  readonly serial: string | null;
}

/** The gateway's headers, or undefined when one is too long or `x-forwarded-client-cert` does not read. */
function gatewayHeadersOf(request: Request): GatewayHeaders | undefined {
  const dn = request.headers.get(SUBJECT_DN_HEADER);
  const xfccText = request.headers.get(XFCC_HEADER);
  const cert = request.headers.get(CERT_HEADER);
  if ((dn ?? '').length > MAX_HEADER || (xfccText ?? '').length > MAX_XFCC) return undefined;
  if ((cert ?? '').length > MAX_CERT_HEADER) return undefined;
  let xfcc: ReadonlyMap<string, string> | null = null;
  if (xfccText !== null) {
    const element = xfccElement(xfccText);
    if ('problem' in element) return undefined;
    xfcc = element.pairs;
  }
  return { dn, xfcc, cert, serial: request.headers.get(SERIAL_HEADER) };
}

/**
 * The CN the headers state: in `subject-distinguished-name` (RFC 4514/2253, or the OpenSSL
 * legacy form when it starts with `/`) and/or in Envoy's `x-forwarded-client-cert`
 * `Subject`. Each is read by the rules of its form (see distinguished-name.ts); when both
 * are sent they must name the same CN. Anything malformed or ambiguous has no CN.
 */
function statedCommonName({ dn, xfcc }: GatewayHeaders): string | undefined {
  const names: string[] = [];
  for (const subject of [dn, xfcc && (xfcc.get('subject') ?? '')]) {
    if (subject === null) continue;
    const read = subjectCommonName(subject);
    if ('problem' in read) return undefined;
    names.push(read.commonName);
  }
  const [first] = names;
  return first !== undefined && names.every((name) => name === first) ? first : undefined;
}

/** The CN a gateway states in its headers (see {@link statedCommonName}); undefined when none reads. */
export function gatewayCommonName(request: Request): string | undefined {
  const headers = gatewayHeadersOf(request);
  return headers && statedCommonName(headers);
}

/**
 * The URL-escaped PEM a gateway forwards: `ssl-client-cert`, or `Cert=` in
 * `x-forwarded-client-cert`; null when none; undefined when the two differ.
 */
function forwardedPemOf({ cert, xfcc }: GatewayHeaders): string | null | undefined {
  const inXfcc = xfcc?.get('cert') ?? null;
  if (cert !== null && inXfcc !== null && cert !== inXfcc) return undefined;
  const pem = cert ?? inXfcc;
  return pem !== null && pem.length > MAX_CERT_HEADER ? undefined : pem;
}

/**
 * The identity a gateway states: its CN (see {@link statedCommonName}) and
 * `cert-serial-number`. When it also forwards the certificate, the identity is the
 * certificate's (CN, serial and RFC 8705 thumbprint, so certificate-bound tokens work
 * behind it), and the stated CN and serial must be the certificate's.
 */
function identityFromHeaders(
  request: Request,
  forwarded: ForwardedCertificateReader,
): ClientCertificate | undefined {
  const headers = gatewayHeadersOf(request);
  if (headers === undefined) return undefined;
  const commonName = statedCommonName(headers);
  if (commonName === undefined) return undefined;
  const pem = forwardedPemOf(headers);
  if (pem === undefined) return undefined;
  const { serial } = headers;
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
