import type { ConnectionOptions } from 'node:tls';
import { type CertificateInUse, StoreError } from '../../ports/stores.js';
import { certificateAndKey, certificateBundle } from '../shared/certificates.js';
import { readRegularFile, readRegularFileSync } from '../shared/named-files.js';
import { readSecretFile, readSecretFileAsync } from '../shared/secret-files.js';
import { type PostgresTls, SYSTEM_ROOTS } from './url.js';

/**
 * The TLS options node-postgres is given for a store's connections, from the URL's libpq
 * parameters: the files read and checked once, when the pool is made (the CA bundle parses,
 * the client key is its certificate's and the certificate valid now), so that a bad file
 * stops the start with its name instead of failing each connection. Each pooled connection
 * makes its own handshake, once, with these options; read again at a reload (SIGHUP, or a file
 * changed: {@link reloadPostgresTls}, which never blocks the event loop), they are the next
 * connections'. Every file is read by the shared reader: a FIFO, a directory or a device in a
 * file's place is refused, never waited on; the key refused when others may read or write it.
 */

/** The files' contents as read, before they are checked. */
interface TlsFileContents {
  readonly ca?: string | undefined;
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
}

const refuse = (message: string) => new StoreError(message);

/** The CA bundle of `sslrootcert`, when it is a file (not libpq's `system`). */
const rootCertOf = (tls: PostgresTls): string | undefined =>
  tls.rootCert !== undefined && tls.rootCert !== SYSTEM_ROOTS ? tls.rootCert : undefined;

/** How a certificate file is named in a refusal: `audit store: sslrootcert PATH cannot be read (ENOENT)`. */
const pemLabel = (store: string, parameter: string) => `${store}: ${parameter}`;

/**
 * How the key is named: `case store sslkey: PATH is readable by others …`, as the secret
 * files' rule names a variable.
 */
const keyName = (store: string) => `${store} sslkey`;

function readFilesSync(store: string, tls: PostgresTls): TlsFileContents {
  const pem = (parameter: string, path: string) =>
    readRegularFileSync(pemLabel(store, parameter), path, refuse).bytes.toString('utf8');
  const rootCert = rootCertOf(tls);
  const ca = rootCert === undefined ? undefined : pem('sslrootcert', rootCert);
  if (tls.cert === undefined || tls.key === undefined) return { ca };
  // A private key: refused when others may read or write it (decisions §17, §20).
  return { ca, cert: pem('sslcert', tls.cert), key: readSecretFile(keyName(store), tls.key, refuse) };
}

async function readFiles(store: string, tls: PostgresTls): Promise<TlsFileContents> {
  const pem = async (parameter: string, path: string) =>
    (await readRegularFile(pemLabel(store, parameter), path, refuse)).bytes.toString('utf8');
  const rootCert = rootCertOf(tls);
  const ca = rootCert === undefined ? undefined : await pem('sslrootcert', rootCert);
  if (tls.cert === undefined || tls.key === undefined) return { ca };
  return {
    ca,
    cert: await pem('sslcert', tls.cert),
    key: await readSecretFileAsync(keyName(store), tls.key, refuse),
  };
}

/** `false` for no TLS, else the options of each connection's handshake. Throws {@link StoreError} naming the store and the parameter. */
export function sslOptionsOf(store: string, tls: PostgresTls): false | ConnectionOptions {
  return readPostgresTls(store, tls).ssl;
}

/** The files a store's TLS reads, watched for a change: the CA bundle (not the system's) and the client certificate and key. */
export function postgresTlsFiles(tls: PostgresTls): string[] {
  if (tls.assurance === 'none') return [];
  return [tls.rootCert === SYSTEM_ROOTS ? undefined : tls.rootCert, tls.cert, tls.key].filter(
    (file): file is string => file !== undefined,
  );
}

/**
 * {@link sslOptionsOf}, and the client certificate they present (undefined without one): read
 * and checked at start.
 */
export function readPostgresTls(
  store: string,
  tls: PostgresTls,
): { readonly ssl: false | ConnectionOptions; readonly inUse: CertificateInUse | undefined } {
  if (tls.assurance === 'none') return { ssl: false, inUse: undefined };
  return optionsOf(store, tls, readFilesSync(store, tls));
}

/**
 * {@link readPostgresTls} at a reload: the same files and checks, read without blocking the
 * event loop, so that new connections take rotated files and a file turned into a FIFO never
 * stops the service. Rejects with a {@link StoreError} naming the store and the parameter.
 */
export async function reloadPostgresTls(
  store: string,
  tls: PostgresTls,
): Promise<{ readonly ssl: false | ConnectionOptions; readonly inUse: CertificateInUse | undefined }> {
  if (tls.assurance === 'none') return { ssl: false, inUse: undefined };
  return optionsOf(store, tls, await readFiles(store, tls));
}

/** The files' contents checked, and made into the handshake's options for the URL's `sslmode`. */
function optionsOf(
  store: string,
  tls: PostgresTls,
  files: TlsFileContents,
): { readonly ssl: false | ConnectionOptions; readonly inUse: CertificateInUse | undefined } {
  let inUse: CertificateInUse | undefined;
  const options: { -readonly [K in keyof ConnectionOptions]: ConnectionOptions[K] } = {};
  try {
    if (files.ca !== undefined) {
      certificateBundle('sslrootcert', files.ca);
      options.ca = files.ca;
    }
    if (files.cert !== undefined && files.key !== undefined) {
      inUse = certificateAndKey(
        { cert: 'sslcert', key: 'sslkey' },
        { cert: files.cert, key: files.key },
        new Date(),
      );
      options.cert = files.cert;
      options.key = files.key;
    }
  } catch (error) {
    throw new StoreError(`${store}: ${(error as Error).message}`);
  }
  switch (tls.assurance) {
    case 'none':
      return { ssl: false, inUse: undefined };
    case 'encrypted':
      // libpq's `require` without a root certificate: encrypted, the server not verified.
      return { ssl: { ...options, rejectUnauthorized: false }, inUse };
    case 'verify-ca':
      // The chain is verified; the host name is not (libpq's verify-ca).
      return {
        ssl: { ...options, rejectUnauthorized: true, checkServerIdentity: () => undefined },
        inUse,
      };
    case 'verify-full':
      return { ssl: { ...options, rejectUnauthorized: true }, inUse };
  }
}
