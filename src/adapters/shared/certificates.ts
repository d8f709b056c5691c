import { createPrivateKey, X509Certificate } from 'node:crypto';
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { CertificateInUse } from '../../ports/stores.js';

/**
 * Checks of the certificate files the service is given (the listener's and the upstream
 * client's), made before they are used, at start and at every reload: each PEM block parses,
 * the key belongs to the certificate, the certificate is valid now, a CRL parses. The
 * runtimes' own TLS does not check all of this (Deno takes a key that does not match, and a
 * CA bundle of garbage), so the checks are made here, with `node:crypto`, the same on all.
 */

/** A certificate file that cannot be used; the message names the variable, never the contents. */
export class CertificateFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateFileError';
  }
}

const PEM_BLOCK = (label: string) =>
  new RegExp(`-----BEGIN ${label}-----[\\s\\S]+?-----END ${label}-----`, 'g');

/** The PEM blocks of one label in a text, in order. */
function pemBlocks(text: string, label: string): string[] {
  return text.match(PEM_BLOCK(label)) ?? [];
}

/** The common name of an `X509Certificate` subject (one `KEY=value` per line), else the whole subject. */
function commonNameOf(subject: string): string {
  const cn = subject
    .split('\n')
    .filter((line) => line.startsWith('CN='))
    .at(-1);
  return cn === undefined ? subject.replaceAll('\n', ', ') : cn.slice(3);
}

function factsOf(certificate: X509Certificate): CertificateInUse {
  return {
    subject: commonNameOf(certificate.subject),
    serialNumber: CertificateSerial.parse(certificate.serialNumber),
    notAfter: new Date(certificate.validTo),
  };
}

/** Every certificate of a PEM bundle, parsed; refused when there is none or one does not parse. */
function parseBundle(variable: string, pem: string): X509Certificate[] {
  const blocks = pemBlocks(pem, 'CERTIFICATE');
  if (blocks.length === 0) throw new CertificateFileError(`${variable}: holds no PEM certificate`);
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new CertificateFileError(`${variable}: certificate ${index + 1} does not parse`);
    }
  });
}

/** Whether the bundle `pem` (named by `variable`) holds the certificate whose DER is `der`. */
export function bundleHolds(variable: string, pem: string, der: Uint8Array): boolean {
  const wanted = Buffer.from(der);
  return parseBundle(variable, pem).some((certificate) => certificate.raw.equals(wanted));
}

/** The certificates of a CA bundle (e.g. `TLS_CLIENT_CA`), each with its facts. */
export function certificateBundle(variable: string, pem: string): CertificateInUse[] {
  return parseBundle(variable, pem).map(factsOf);
}

/**
 * A certificate (chain) and its private key, checked: the first certificate parses, is
 * valid at `now`, and the key is its key. Returns the first certificate's facts.
 */
export function certificateAndKey(
  names: { readonly cert: string; readonly key: string },
  files: { readonly cert: string; readonly key: string },
  now: Date,
): CertificateInUse {
  const [leaf] = parseBundle(names.cert, files.cert);
  if (leaf === undefined) throw new CertificateFileError(`${names.cert}: holds no PEM certificate`);
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(files.key);
  } catch {
    throw new CertificateFileError(`${names.key}: holds no private key that parses`);
  }
  if (!leaf.checkPrivateKey(key)) {
    throw new CertificateFileError(`${names.key}: is not the key of the certificate in ${names.cert}`);
  }
  const facts = factsOf(leaf);
  if (facts.notAfter.getTime() <= now.getTime()) {
    throw new CertificateFileError(`${names.cert}: expired at ${facts.notAfter.toISOString()}`);
  }
  if (new Date(leaf.validFrom).getTime() > now.getTime()) {
    throw new CertificateFileError(
      `${names.cert}: not valid before ${new Date(leaf.validFrom).toISOString()}`,
    );
  }
  return facts;
}

/**
 * A CRL file holds at least one PEM CRL. Whether it parses is the TLS stack's to say: every
 * runtime refuses a CRL it cannot parse when the secure context is made (Bun refuses every
 * CRL, and `serve` says so at start).
 */
export function checkCrl(variable: string, pem: string): void {
  if (pemBlocks(pem, 'X509 CRL').length === 0)
    throw new CertificateFileError(`${variable}: holds no PEM CRL`);
}
