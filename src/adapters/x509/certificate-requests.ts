import { createPublicKey } from 'node:crypto';
import {
  CertificateRequestError,
  type CertificateRequests,
  type CheckedCertificateRequest,
  MAX_CSR_BYTES,
} from '../../ports/certificate-requests.js';
import { x509 } from './webcrypto.js';

const PEM_CSR = /-----BEGIN (NEW )?CERTIFICATE REQUEST-----/;

/** The bytes of a CSR given as PEM text (or PEM bytes, a file read as is) or as DER bytes. */
function derOf(request: Uint8Array | string): Uint8Array {
  const pem =
    typeof request === 'string'
      ? request
      : PEM_CSR.test(Buffer.from(request.subarray(0, 64)).toString('latin1'))
        ? Buffer.from(request).toString('utf8')
        : undefined;
  if (pem === undefined) return request as Uint8Array;
  if (!PEM_CSR.test(pem)) throw new CertificateRequestError('not-a-csr', 'not a PKCS#10 certificate request');
  try {
    return new Uint8Array(
      x509.PemConverter.decodeFirst(pem.replace(/NEW CERTIFICATE REQUEST/g, 'CERTIFICATE REQUEST')),
    );
  } catch {
    throw new CertificateRequestError('not-a-csr', 'not a PKCS#10 certificate request');
  }
}

/** `EC P-256`, `Ed25519`, `RSA 3072`: the kinds of key accepted, or undefined for any other. */
function keyKindOf(spki: Uint8Array): string | undefined {
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'ec':
      return details.namedCurve === 'prime256v1'
        ? 'EC P-256'
        : details.namedCurve === 'secp384r1'
          ? 'EC P-384'
          : undefined;
    case 'ed25519':
      return 'Ed25519';
    case 'rsa':
      return (details.modulusLength ?? 0) >= 2048 ? `RSA ${details.modulusLength}` : undefined;
    default:
      return undefined;
  }
}

/**
 * Reads consumers' CSRs with @peculiar/x509 (no ASN.1 written here): the checks of
 * decisions §12, each failing closed with what failed, and the certs-only PKCS#7 that EST
 * clients and `openssl pkcs7 -print_certs` read.
 */
export const x509CertificateRequests: CertificateRequests = {
  async read(request): Promise<CheckedCertificateRequest> {
    const size = typeof request === 'string' ? Buffer.byteLength(request) : request.byteLength;
    if (size > MAX_CSR_BYTES) {
      throw new CertificateRequestError(
        'too-large',
        `a certificate request is at most ${MAX_CSR_BYTES} bytes`,
      );
    }
    const der = derOf(request);
    let csr: x509.Pkcs10CertificateRequest;
    try {
      csr = new x509.Pkcs10CertificateRequest(der);
    } catch {
      throw new CertificateRequestError('not-a-csr', 'not a PKCS#10 certificate request');
    }
    // The key and the subject are decoded when first read, and either may not decode (a key
    // whose parameters are not a curve's name, say): a refusal, never an unexpected throw.
    let publicKeyDer: Uint8Array | undefined;
    try {
      publicKeyDer = new Uint8Array(csr.publicKey.rawData);
    } catch {
      publicKeyDer = undefined;
    }
    const keyKind = publicKeyDer && keyKindOf(publicKeyDer);
    if (publicKeyDer === undefined || keyKind === undefined) {
      throw new CertificateRequestError(
        'unsupported-key',
        'the key must be EC P-256 or P-384, Ed25519, or RSA of at least 2048 bits',
      );
    }
    let verified = false;
    try {
      verified = await csr.verify();
    } catch {
      verified = false;
    }
    if (!verified) {
      throw new CertificateRequestError(
        'bad-signature',
        "the request's signature does not verify with its key",
      );
    }
    // One RDN holding one CN, and nothing else: the name is the only thing taken from it.
    let rdns: x509.JsonName;
    try {
      rdns = csr.subjectName.toJSON();
    } catch {
      rdns = [];
    }
    const only = rdns.length === 1 ? rdns[0] : undefined;
    const types = only ? Object.keys(only) : [];
    const values = only?.CN ?? [];
    if (types.length !== 1 || types[0] !== 'CN' || values.length !== 1 || !values[0]) {
      throw new CertificateRequestError(
        'subject-not-cn-only',
        'the subject must be CN=<client name> and nothing else',
      );
    }
    return { commonName: values[0], der, publicKeyDer, keyKind };
  },

  certsOnly(certificates) {
    return new Uint8Array(
      new x509.X509Certificates(certificates.map((pem) => new x509.X509Certificate(pem))).export('raw'),
    );
  },
};
