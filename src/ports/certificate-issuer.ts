import type { Deadline } from './deadline.js';

/**
 * What a client certificate holds, as this service decides it (decisions §12): never copied
 * from the CSR. The subject is `CN=<commonName>` and nothing else; extended key usage
 * clientAuth, key usage digitalSignature, not a CA, a random serial (at least 126 random bits).
 */
export interface ClientCertificateOrder {
  /** The client's name (a checked client name). */
  readonly commonName: string;
  /** The consumer's CSR, DER, already checked (its signature, key and subject). */
  readonly csrDer: Uint8Array;
  /** The consumer's public key from that CSR, SubjectPublicKeyInfo DER: the key certified. */
  readonly publicKeyDer: Uint8Array;
  /** Validity in days from now (`CLIENT_CERT_DAYS`, 1..397). */
  readonly days: number;
}

/** A certificate issued to a client. */
export interface IssuedClientCertificate {
  /** The certificate, PEM. */
  readonly pem: string;
  /** Upper-case hex without leading zeros, as the access directory stores serials. */
  readonly serialNumber: string;
  readonly notAfter: Date;
}

/** The CA refused or failed: nothing was issued. `label` is safe to log (an error code). */
export class CertificateIssuerError extends Error {
  override readonly name = 'CertificateIssuerError';
  constructor(
    readonly label: string,
    readonly timedOut = false,
  ) {
    super(`the certificate issuer failed (${label})`);
  }
}

/**
 * The issuer of client certificates (`CLIENT_CERT_ISSUER`): a local CA whose key the service
 * holds, or AWS Private CA, which keeps its key to itself. Only public keys pass through
 * it: the consumer's private key never leaves the consumer.
 */
export interface CertificateIssuer {
  /** Issues the certificate of `order`; rejects with {@link CertificateIssuerError} when it cannot. */
  issue(order: ClientCertificateOrder, deadline?: Deadline): Promise<IssuedClientCertificate>;
  /** The issuing CA's certificate (and any chain above it), PEM, for `/.well-known/est/cacerts`. */
  caCertificates(deadline?: Deadline): Promise<readonly string[]>;
}
