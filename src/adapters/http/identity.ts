import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { ClientCertificate } from '../../domain/access/model.js';
import { subjectCommonName, xfccSubject } from './distinguished-name.js';

/**
 * The client identity for a request: from the verified TLS peer certificate (the Node
 * adapter supplies that reader) or, only when configured, from headers set by a trusted
 * TLS-terminating gateway.
 */
export type IdentityReader = (request: Request, env: unknown) => ClientCertificate | undefined;

export const SUBJECT_DN_HEADER = 'subject-distinguished-name';
export const SERIAL_HEADER = 'cert-serial-number';
export const XFCC_HEADER = 'x-forwarded-client-cert';

/** The longest identity header read; longer is refused (no real subject is near it). */
const MAX_HEADER = 4096;

/**
 * The CN a gateway states: in `subject-distinguished-name` (RFC 4514/2253, or the OpenSSL
 * legacy form when it starts with `/`) and/or in Envoy's `x-forwarded-client-cert`
 * `Subject`. Each is read by the rules of its form (see distinguished-name.ts); when both
 * are sent they must name the same CN. Anything malformed or ambiguous has no CN.
 */
export function gatewayCommonName(request: Request): string | undefined {
  const dn = request.headers.get(SUBJECT_DN_HEADER);
  const xfcc = request.headers.get(XFCC_HEADER);
  if ((dn ?? '').length > MAX_HEADER || (xfcc ?? '').length > MAX_HEADER) return undefined;
  const names: string[] = [];
  if (dn !== null) {
    const read = subjectCommonName(dn);
    if ('problem' in read) return undefined;
    names.push(read.commonName);
  }
  if (xfcc !== null) {
    const subject = xfccSubject(xfcc);
    if ('problem' in subject) return undefined;
    const read = subjectCommonName(subject.subject);
    if ('problem' in read) return undefined;
    names.push(read.commonName);
  }
  const [first] = names;
  return first !== undefined && names.every((name) => name === first) ? first : undefined;
}

/** The identity a gateway states: its CN (see {@link gatewayCommonName}) and `cert-serial-number`. */
function identityFromHeaders(request: Request): ClientCertificate | undefined {
  const serial = request.headers.get(SERIAL_HEADER);
  if (serial === null) return undefined;
  const commonName = gatewayCommonName(request);
  const serialNumber = CertificateSerial.tryParse(serial);
  if (commonName === undefined || serialNumber === undefined) return undefined;
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
export function trustedGatewayIdentity(gateways: ReadonlySet<string>, peer: IdentityReader): IdentityReader {
  if (gateways.size === 0) throw new Error('trusted-header identity needs at least one trusted gateway');
  return (request, env) => {
    const own = peer(request, env);
    if (own === undefined) return undefined;
    return gateways.has(own.commonName) ? identityFromHeaders(request) : own;
  };
}
