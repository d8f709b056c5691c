import {
  CertificateFileError,
  certificateAndKey,
  certificateBundle,
  checkCrl,
} from '../../adapters/shared/certificates.js';
import {
  readNamedFile,
  readNamedFileAsync,
  readSecretFile,
  readSecretFileAsync,
} from '../../adapters/shared/secret-files.js';
import type { TlsFiles } from '../../adapters/tls-listener/server.js';
import type { NamedCertificate } from '../tls-reload.js';
import { type Config, ConfigError } from './config.js';

/**
 * The files `serve` reads its certificates and keys from, read and checked as `serve`,
 * `config check` and `certs sign` read them: a file that cannot be read or is not a regular
 * file (a FIFO is refused, never waited on), a key readable or writable by others, a
 * certificate that does not parse, each a ConfigError naming the variable. Read at start
 * with the synchronous reads, at a reload ({@link reloadListenerTls}) without blocking the
 * event loop.
 */

const refuse = (message: string) => new ConfigError([message]);

/** A PEM file named by `variable`; one that cannot be read, or is not a regular file, is a ConfigError naming it. */
export const readPem = (variable: string, path: string): string => readNamedFile(variable, path, refuse);

/** A private key file, read as {@link readPem} reads a PEM file, and refused when others can read or write it. */
export const readKey = (variable: string, path: string): string => readSecretFile(variable, path, refuse);

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

/** {@link readTlsFiles} without blocking the event loop: one after another, the first at fault named, as at start. */
async function readTlsFilesAsync(config: Config): Promise<TlsFiles> {
  const cert = await readNamedFileAsync('TLS_CERT', config.TLS_CERT, refuse);
  const key = await readSecretFileAsync('TLS_KEY', config.TLS_KEY, refuse);
  const clientCa = await readNamedFileAsync('TLS_CLIENT_CA', config.TLS_CLIENT_CA, refuse);
  const crl = config.TLS_CRL ? await readNamedFileAsync('TLS_CRL', config.TLS_CRL, refuse) : undefined;
  return { cert, key, clientCa, ...(crl !== undefined ? { crl } : {}) };
}

/** The files checked (see {@link readListenerTls}), with the certificates they hold. */
function checked(files: TlsFiles): { files: TlsFiles; certificates: NamedCertificate[] } {
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

/**
 * The listener's TLS files, read at start and checked (the key is the certificate's and not
 * readable or writable by others, the certificate valid now, every CA of the bundle parses,
 * the CRL file holds a CRL), with the certificates they hold for the expiry metrics. Throws
 * a ConfigError naming the variable at fault.
 */
export function readListenerTls(config: Config): { files: TlsFiles; certificates: NamedCertificate[] } {
  return checked(readTlsFiles(config));
}

/**
 * {@link readListenerTls} for a reload: the same files and checks, read without blocking the
 * event loop, so that a file changed under a running service (a FIFO in a key's place)
 * never stops it answering. Rejects with a ConfigError naming the variable at fault.
 */
export async function reloadListenerTls(
  config: Config,
): Promise<{ files: TlsFiles; certificates: NamedCertificate[] }> {
  return checked(await readTlsFilesAsync(config));
}

/** The files of the listener's TLS set, as configured. */
export const listenerTlsPaths = (config: Config): string[] =>
  [config.TLS_CERT, config.TLS_KEY, config.TLS_CLIENT_CA, config.TLS_CRL].filter(
    (path): path is string => path !== undefined,
  );
