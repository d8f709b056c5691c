import { createPrivateKey, createPublicKey, webcrypto } from 'node:crypto';
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type {
  CertificateIssuer,
  ClientCertificateOrder,
  IssuedClientCertificate,
} from '../../ports/certificate-issuer.js';
import { randomSerial, x509 } from './webcrypto.js';

type CryptoKey = webcrypto.CryptoKey;
const MINUTE = 60_000;
const DAY = 86_400_000;

/** A CA file that cannot be used, with the variable at fault; the message never holds the key. */
export class LocalIssuerError extends Error {
  override readonly name = 'LocalIssuerError';
}

/** How the CA's key signs: from the key itself (EC P-256, P-384, or RSA). */
function signingOf(keyPem: string): {
  importAs: webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams;
  sign: webcrypto.EcdsaParams | webcrypto.Algorithm;
} {
  const key = createPrivateKey(keyPem);
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'prime256v1') {
    return { importAs: { name: 'ECDSA', namedCurve: 'P-256' }, sign: { name: 'ECDSA', hash: 'SHA-256' } };
  }
  if (key.asymmetricKeyType === 'ec' && details.namedCurve === 'secp384r1') {
    return { importAs: { name: 'ECDSA', namedCurve: 'P-384' }, sign: { name: 'ECDSA', hash: 'SHA-384' } };
  }
  if (key.asymmetricKeyType === 'rsa') {
    return {
      importAs: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      sign: { name: 'RSASSA-PKCS1-v1_5' },
    };
  }
  throw new LocalIssuerError('CLIENT_CA_KEY: the CA key must be EC P-256 or P-384, or RSA');
}

/**
 * Client certificates signed by a CA whose key this service holds (`CLIENT_CERT_ISSUER=local`:
 * development and small deployments). What is issued is decided here, never copied from the
 * CSR: subject CN only, `days` of validity, extended key usage clientAuth, key usage
 * digitalSignature, not a CA, a 128-bit serial (126 bits of it random); the CSR gives its public key alone.
 */
export class LocalCertificateIssuer implements CertificateIssuer {
  private constructor(
    private readonly ca: x509.X509Certificate,
    private readonly caPem: string,
    private readonly key: CryptoKey,
    private readonly sign: webcrypto.EcdsaParams | webcrypto.Algorithm,
  ) {}

  /**
   * Loads the CA from its PEM certificate and PKCS#8 (or SEC1/PKCS#1) key. Refuses a key that
   * is not the certificate's, and a certificate that is no CA.
   */
  static async load(certPem: string, keyPem: string): Promise<LocalCertificateIssuer> {
    let ca: x509.X509Certificate;
    try {
      ca = new x509.X509Certificate(certPem);
    } catch {
      throw new LocalIssuerError('CLIENT_CA_CERT: not a PEM certificate');
    }
    let signing: ReturnType<typeof signingOf>;
    let pkcs8: Buffer;
    try {
      signing = signingOf(keyPem);
      pkcs8 = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' });
    } catch (error) {
      if (error instanceof LocalIssuerError) throw error;
      throw new LocalIssuerError('CLIENT_CA_KEY: not a PEM private key');
    }
    const fromKey = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    if (!Buffer.from(ca.publicKey.rawData).equals(fromKey)) {
      throw new LocalIssuerError('CLIENT_CA_KEY: is not the key of the CA certificate in CLIENT_CA_CERT');
    }
    const basic = ca.getExtension(x509.BasicConstraintsExtension);
    if (!basic?.ca)
      throw new LocalIssuerError('CLIENT_CA_CERT: is not a CA certificate (basicConstraints CA:TRUE)');
    const key = await webcrypto.subtle.importKey('pkcs8', pkcs8, signing.importAs, false, ['sign']);
    return new LocalCertificateIssuer(ca, ca.toString('pem'), key, signing.sign);
  }

  async issue(order: ClientCertificateOrder): Promise<IssuedClientCertificate> {
    const now = Date.now();
    const notAfter = new Date(now + order.days * DAY);
    const publicKey = new x509.PublicKey(order.publicKeyDer);
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: [{ CN: [order.commonName] }],
      issuer: this.ca.subjectName.toJSON(),
      // A little before now, for clocks a little behind.
      notBefore: new Date(now - 5 * MINUTE),
      notAfter,
      publicKey,
      signingKey: this.key,
      signingAlgorithm: this.sign,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
        await x509.AuthorityKeyIdentifierExtension.create(this.ca, false),
        await x509.SubjectKeyIdentifierExtension.create(publicKey),
      ],
    });
    return {
      pem: certificate.toString('pem'),
      serialNumber: CertificateSerial.parse(certificate.serialNumber),
      notAfter: certificate.notAfter,
    };
  }

  async caCertificates(): Promise<readonly string[]> {
    return [this.caPem];
  }

  /** The CA certificate's DER, to find it in a bundle (`TLS_CLIENT_CA` must hold it). */
  get caDer(): Uint8Array {
    return new Uint8Array(this.ca.rawData);
  }
}
