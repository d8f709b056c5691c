import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { StoreError } from '../../ports/stores.js';
import { certificateAndKey, certificateBundle } from '../shared/certificates.js';
import { readSecretFile } from '../shared/secret-files.js';
import { type PostgresTls, SYSTEM_ROOTS } from './url.js';

/**
 * The TLS options node-postgres is given for a store's connections, from the URL's libpq
 * parameters: the files read and checked once, when the pool is made (the CA bundle parses,
 * the client key is its certificate's and the certificate valid now), so that a bad file
 * stops the start with its name instead of failing each connection. Each pooled connection
 * makes its own handshake, once, with these options.
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
  if (tls.assurance === 'none') return false;
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
      certificateAndKey({ cert: 'sslcert', key: 'sslkey' }, { cert, key }, new Date());
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
      return { ...options, rejectUnauthorized: false };
    case 'verify-ca':
      // The chain is verified; the host name is not (libpq's verify-ca).
      return { ...options, rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { ...options, rejectUnauthorized: true };
  }
}
