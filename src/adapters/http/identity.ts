import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { ClientCertificate } from '../../domain/access/model.js';

/**
 * The client identity for a request: from the verified TLS peer certificate (the Node
 * adapter supplies that reader) or, only when configured, from headers set by a trusted
 * TLS-terminating gateway.
 */
export type IdentityReader = (request: Request, env: unknown) => ClientCertificate | undefined;

export const SUBJECT_DN_HEADER = 'subject-distinguished-name';
export const SERIAL_HEADER = 'cert-serial-number';

/** The CN of a distinguished name such as `C=GB,O=Example,CN=client-a` (RFC 4514 commas, or `/` separated). */
export function commonNameOf(dn: string): string | undefined {
  const parts = dn.split(/(?<!\\)[,/]/).map((p) => p.trim());
  const cns = parts.filter((p) => /^CN=/i.test(p)).map((p) => p.slice(3).replaceAll('\\,', ','));
  return cns.length === 1 && cns[0] !== '' ? cns[0] : undefined;
}

/** The identity a gateway states in `subject-distinguished-name` and `cert-serial-number`. */
function identityFromHeaders(request: Request): ClientCertificate | undefined {
  const dn = request.headers.get(SUBJECT_DN_HEADER);
  const serial = request.headers.get(SERIAL_HEADER);
  if (dn === null || serial === null || dn.length > 1024) return undefined;
  const commonName = commonNameOf(dn);
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
