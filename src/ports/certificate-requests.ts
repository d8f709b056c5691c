/**
 * A consumer's PKCS#10 certificate signing request (CSR), read and checked (decisions §12):
 * only its public key and its name are ever used; its private key never reaches this service.
 */
export interface CheckedCertificateRequest {
  /** The one CN of its subject (its subject holds nothing else). */
  readonly commonName: string;
  /** The request itself, DER. */
  readonly der: Uint8Array;
  /** Its public key, SubjectPublicKeyInfo DER. */
  readonly publicKeyDer: Uint8Array;
  /** The key's kind, for logs and messages: `EC P-256`, `RSA 3072`, `Ed25519`, … */
  readonly keyKind: string;
}

/** Why a CSR was refused: each a 400 (413 for `too-large`), nothing issued. */
export type CertificateRequestProblem =
  | 'too-large'
  | 'not-a-csr'
  | 'bad-signature'
  | 'unsupported-key'
  | 'subject-not-cn-only';

/** A CSR refused by {@link CertificateRequests.read}; `message` says why, safe to show its sender. */
export class CertificateRequestError extends Error {
  override readonly name = 'CertificateRequestError';
  constructor(
    readonly problem: CertificateRequestProblem,
    message: string,
  ) {
    super(message);
  }
}

/** CSRs larger than this are refused unread. */
export const MAX_CSR_BYTES = 16 * 1024;

/** Reading CSRs and writing certificates the way EST clients read them. */
export interface CertificateRequests {
  /**
   * Reads a CSR, DER (or PEM, from the operator's command), and checks it: at most
   * {@link MAX_CSR_BYTES}; a PKCS#10 request whose signature verifies with its own key; an
   * EC P-256 or P-384, Ed25519, or RSA key of at least 2048 bits; a subject that is one CN
   * and nothing else. Throws {@link CertificateRequestError} naming what failed.
   */
  read(request: Uint8Array | string): Promise<CheckedCertificateRequest>;
  /** A certs-only PKCS#7 (CMS SignedData with no signers), DER, holding `certificates` (PEM). */
  certsOnly(certificates: readonly string[]): Uint8Array;
}
