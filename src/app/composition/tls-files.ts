import { readFileSync } from 'node:fs';
import {
  CertificateFileError,
  certificateAndKey,
  certificateBundle,
  checkCrl,
} from '../../adapters/shared/certificates.js';
import { readSecretFile } from '../../adapters/shared/secret-files.js';
import type { TlsFiles } from '../../adapters/tls-listener/server.js';
import type { NamedCertificate } from '../tls-reload.js';
import { type Config, ConfigError } from './config.js';

/**
 * The files `serve` reads its certificates and keys from, read and checked as `serve`,
 * `config check` and `certs sign` read them: a file that cannot be read, a key readable by
 * others, a certificate that does not parse, each a ConfigError naming the variable.
 */

/** A PEM file named by `variable`; a file that cannot be read is a ConfigError naming it. */
export function readPem(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `${variable}: ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
}

/** A private key file, read as {@link readPem} reads a PEM file, and refused when others can read it. */
export const readKey = (variable: string, path: string): string =>
  readSecretFile(variable, path, (message) => new ConfigError([message]));

/** The client CA bundle (`TLS_CLIENT_CA`), read as `serve` reads it. */
export const readClientCa = (config: Pick<Config, 'TLS_CLIENT_CA'>): string =>
  readPem('TLS_CLIENT_CA', config.TLS_CLIENT_CA);

function readTlsFiles(config: Config): TlsFiles {
  return {
    cert: readPem('TLS_CERT', config.TLS_CERT),
    key: readKey('TLS_KEY', config.TLS_KEY),
    clientCa: readClientCa(config),
    ...(config.TLS_CRL ? { crl: readPem('TLS_CRL', config.TLS_CRL) } : {}),
  };
}

/**
 * The listener's TLS files, read and checked (the key is the certificate's and not readable
 * by others, the certificate valid now, every CA of the bundle parses, the CRL file holds a
 * CRL), with the certificates they hold for the expiry metrics. Throws a ConfigError naming
 * the variable at fault.
 */
export function readListenerTls(config: Config): { files: TlsFiles; certificates: NamedCertificate[] } {
  const files = readTlsFiles(config);
  try {
    const server = certificateAndKey({ cert: 'TLS_CERT', key: 'TLS_KEY' }, files, new Date());
    const cas = certificateBundle('TLS_CLIENT_CA', files.clientCa);
    if (files.crl !== undefined) checkCrl('TLS_CRL', files.crl);
    return {
      files,
      certificates: [
        { certificate: 'server', ...server },
        ...cas.map((ca) => ({ certificate: 'client-ca', ...ca })),
      ],
    };
  } catch (error) {
    if (error instanceof CertificateFileError) throw new ConfigError([error.message]);
    throw error;
  }
}

/** The files of the listener's TLS set, as configured. */
export const listenerTlsPaths = (config: Config): string[] =>
  [config.TLS_CERT, config.TLS_KEY, config.TLS_CLIENT_CA, config.TLS_CRL].filter(
    (path): path is string => path !== undefined,
  );
