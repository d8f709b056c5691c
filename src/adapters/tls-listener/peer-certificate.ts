import { createHash, X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { ClientCertificate } from '../../domain/access/model.js';

const bySocket = new WeakMap<object, ClientCertificate | null>();

/** base64url SHA-256 of a DER certificate: RFC 8705's `x5t#S256`. */
export function thumbprintOfDer(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('base64url');
}

/** The `x5t#S256` thumbprint of a PEM certificate (for `tokens mint --bind-cert`). */
export function thumbprintOfPem(pem: string): string {
  return thumbprintOfDer(new X509Certificate(pem).raw);
}

/**
 * The verified client certificate of a request on the mutual-TLS listener, or undefined
 * when the socket has none that verified. Read once per TLS connection: keep-alive requests
 * reuse it.
 */
export function peerCertificateOf(env: unknown): ClientCertificate | undefined {
  const incoming = (env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const socket = incoming?.socket as TLSSocket | undefined;
  if (socket === undefined || typeof socket.getPeerCertificate !== 'function') return undefined;
  const known = bySocket.get(socket);
  if (known !== undefined) return known ?? undefined;
  let certificate: ClientCertificate | null = null;
  const peer = socket.authorized ? socket.getPeerCertificate() : undefined;
  const cn = peer?.subject?.CN;
  const serialNumber = peer ? CertificateSerial.tryParse(peer.serialNumber ?? '') : undefined;
  if (peer?.raw && typeof cn === 'string' && cn.length > 0 && serialNumber !== undefined) {
    certificate = {
      commonName: cn,
      serialNumber,
      thumbprintS256: thumbprintOfDer(peer.raw),
      notAfter: new Date(peer.valid_to),
    };
  }
  bySocket.set(socket, certificate);
  return certificate ?? undefined;
}
