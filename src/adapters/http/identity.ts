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

/**
 * Identity from gateway headers. The gateway must strip these headers from what clients send
 * and set them from the certificate it verified; the listener still demands the gateway's
 * own client certificate, so no one else can reach the service to set them.
 */
export const trustedHeaderIdentity: IdentityReader = (request) => {
  const dn = request.headers.get(SUBJECT_DN_HEADER);
  const serial = request.headers.get(SERIAL_HEADER);
  if (dn === null || serial === null || dn.length > 1024) return undefined;
  const commonName = commonNameOf(dn);
  const hex = serial.replaceAll(':', '').trim().toUpperCase();
  if (commonName === undefined || !/^[0-9A-F]{1,64}$/.test(hex)) return undefined;
  return { commonName, serialNumber: hex.replace(/^0+(?=.)/, ''), thumbprintS256: null, notAfter: null };
};
