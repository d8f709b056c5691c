import { webcrypto } from 'node:crypto';
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import { ClientName } from '../../domain/access/client-name.js';
import { randomSerial, x509 } from './webcrypto.js';

/**
 * A development PKI on WebCrypto (ECDSA P-256, SHA-256) with @peculiar/x509: a CA, a
 * server certificate for localhost, client certificates whose CN names the client, and CRLs.
 * It is for development and tests; production certificates come from the operating
 * organisation's CA.
 */
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface Issued {
  readonly certPem: string;
  readonly keyPem: string;
  /** Upper-case hex without leading zeros, as the access directory stores serials. */
  readonly serialNumber: string;
}

export interface Ca extends Issued {
  readonly certificate: x509.X509Certificate;
  readonly privateKey: CryptoKey;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

export async function createCa(options: { commonName?: string; days?: number } = {}): Promise<Ca> {
  const keys = await keyPair();
  const serial = randomSerial();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial,
    // In certificate order, as CAs conventionally issue: O, then CN last (the OpenSSL legacy
    // form a gateway may forward is read only when the CN is last).
    name: `O=case-read-service (development), CN=${options.commonName ?? 'case-read development CA'}`,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + (options.days ?? 3650) * DAY),
    keys,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    certificate,
    privateKey: keys.privateKey,
    certPem: certificate.toString('pem'),
    keyPem: await privateKeyPem(keys.privateKey),
    serialNumber: CertificateSerial.parse(serial),
  };
}

/** Loads a CA from its PEM certificate and PKCS#8 key. */
export async function loadCa(certPem: string, keyPem: string): Promise<Ca> {
  const certificate = new x509.X509Certificate(certPem);
  const privateKey = await webcrypto.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(keyPem),
    { name: 'ECDSA', namedCurve: 'P-256' },
    true,
    ['sign'],
  );
  return {
    certificate,
    privateKey,
    certPem,
    keyPem,
    serialNumber: CertificateSerial.parse(certificate.serialNumber),
  };
}

interface LeafOptions {
  readonly commonName: string;
  readonly days?: number;
  readonly notBefore?: Date;
  readonly notAfter?: Date;
}

async function issueLeaf(
  ca: Ca,
  options: LeafOptions,
  usage: 'serverAuth' | 'clientAuth',
  sans: x509.JsonGeneralName[] = [],
): Promise<Issued> {
  const keys = await keyPair();
  const serial = randomSerial();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
    new x509.ExtendedKeyUsageExtension(
      [usage === 'serverAuth' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(ca.certificate, false),
  ];
  if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans, false));
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: `O=case-read-service (development), CN=${options.commonName}`,
    issuer: ca.certificate.subject,
    notBefore: options.notBefore ?? new Date(Date.now() - DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + (options.days ?? 365) * DAY),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: SIGN,
    extensions,
  });
  return {
    certPem: certificate.toString('pem'),
    keyPem: await privateKeyPem(keys.privateKey),
    serialNumber: CertificateSerial.parse(serial),
  };
}

/** A server certificate for localhost, 127.0.0.1 and ::1 (and any extra host names). */
export function issueServerCertificate(
  ca: Ca,
  options: { days?: number; hosts?: string[] } = {},
): Promise<Issued> {
  const hosts = ['localhost', ...(options.hosts ?? [])];
  const sans: x509.JsonGeneralName[] = [
    ...hosts.map((value) => ({ type: 'dns' as const, value })),
    { type: 'ip', value: '127.0.0.1' },
    { type: 'ip', value: '::1' },
  ];
  return issueLeaf(ca, { commonName: 'localhost', days: options.days ?? 825 }, 'serverAuth', sans);
}

/** A client certificate whose subject CN names the client. */
export function issueClientCertificate(ca: Ca, options: LeafOptions): Promise<Issued> {
  if (ClientName.tryParse(options.commonName) === undefined) {
    throw new Error('client CN must be 1-64 characters of letters, digits, dot, underscore or hyphen');
  }
  return issueLeaf(ca, options, 'clientAuth');
}
