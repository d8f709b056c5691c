import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { type CertificateInUse, StoreError } from '../../ports/stores.js';
import { certificateAndKey, certificateBundle } from '../shared/certificates.js';
import { readSecretFile } from '../shared/secret-files.js';
import { type PostgresTls, SYSTEM_ROOTS } from './url.js';

/**
 * The TLS options node-postgres is given for a store's connections, from the URL's libpq
 * parameters: the files read and checked once, when the pool is made (the CA bundle parses,
 * the client key is its certificate's and the certificate valid now), so that a bad file
 * stops the start with its name instead of failing each connection. Each pooled connection
 * makes its own handshake, once, with these options; read again at a reload (SIGHUP, or a file
 * changed), they are the next connections'.
 */

function fileOf(store: string, parameter: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new StoreError(
      `${store}: ${parameter} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
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
 * and checked at start and at each reload, so that new connections take rotated files.
 */
export function readPostgresTls(
  store: string,
  tls: PostgresTls,
): { readonly ssl: false | ConnectionOptions; readonly inUse: CertificateInUse | undefined } {
  if (tls.assurance === 'none') return { ssl: false, inUse: undefined };
  let inUse: CertificateInUse | undefined;
  const options: { -readonly [K in keyof ConnectionOptions]: ConnectionOptions[K] } = {};
  try {
    if (tls.rootCert !== undefined && tls.rootCert !== SYSTEM_ROOTS) {
      const ca = fileOf(store, 'sslrootcert', tls.rootCert);
      certificateBundle('sslrootcert', ca);
      options.ca = ca;
    }
    if (tls.cert !== undefined && tls.key !== undefined) {
      const cert = fileOf(store, 'sslcert', tls.cert);
      // A private key: refused when others may read it (decisions §17).
      const key = readSecretFile(`${store} sslkey`, tls.key, (message) => new StoreError(message));
      inUse = certificateAndKey({ cert: 'sslcert', key: 'sslkey' }, { cert, key }, new Date());
      options.cert = cert;
      options.key = key;
    }
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError(`${store}: ${(error as Error).message}`);
  }
  switch (tls.assurance) {
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
