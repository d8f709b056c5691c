import type { ConnectionOptions } from 'node:tls';
import { type CertificateInUse, StoreError } from '../../ports/stores.js';
import { certificateAndKey, certificateBundle } from '../shared/certificates.js';
import {
  readNamedFile,
  readNamedFileAsync,
  readSecretFile,
  readSecretFileAsync,
} from '../shared/secret-files.js';
import type { RedisSettings } from './settings.js';

const refuse = (message: string) => new StoreError(message);

/** The files' contents as read, before they are checked. */
interface TlsFileContents {
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
}

/**
 * `RATE_LIMIT_TLS_*` read at start, by the shared reader (a FIFO, a directory or a device
 * refused, never waited on); the key refused when others may read or write it (decisions
 * §17, §20).
 */
function readFilesSync(settings: RedisSettings): TlsFileContents {
  const pem = (variable: string, path: string | undefined) =>
    path === undefined ? undefined : readNamedFile(variable, path, refuse);
  return {
    ca: pem('RATE_LIMIT_TLS_CA', settings.tlsCaFile),
    cert: pem('RATE_LIMIT_TLS_CERT', settings.tlsCertFile),
    key:
      settings.tlsKeyFile === undefined
        ? undefined
        : readSecretFile('RATE_LIMIT_TLS_KEY', settings.tlsKeyFile, refuse),
  };
}

/** {@link readFilesSync} without blocking the event loop: for a reload. */
async function readFiles(settings: RedisSettings): Promise<TlsFileContents> {
  const pem = (variable: string, path: string | undefined) =>
    path === undefined ? undefined : readNamedFileAsync(variable, path, refuse);
  return {
    ca: await pem('RATE_LIMIT_TLS_CA', settings.tlsCaFile),
    cert: await pem('RATE_LIMIT_TLS_CERT', settings.tlsCertFile),
    key:
      settings.tlsKeyFile === undefined
        ? undefined
        : await readSecretFileAsync('RATE_LIMIT_TLS_KEY', settings.tlsKeyFile, refuse),
  };
}

/**
 * The `rediss://` connection's TLS options from `RATE_LIMIT_TLS_*`, read and checked (the CA
 * bundle parses, the key is the certificate's and the certificate valid now), and the client
 * certificate they present. The host name is always verified. Throws {@link StoreError}
 * naming the variable at fault; used at start ({@link reloadRedisTls} at a reload).
 */
export function readRedisTls(settings: RedisSettings): {
  readonly tls: ConnectionOptions;
  readonly inUse: CertificateInUse | undefined;
} {
  return optionsOf(readFilesSync(settings));
}

/**
 * {@link readRedisTls} at a reload: the same files and checks, read without blocking the
 * event loop. Rejects with a {@link StoreError} naming the variable at fault.
 */
export async function reloadRedisTls(settings: RedisSettings): Promise<{
  readonly tls: ConnectionOptions;
  readonly inUse: CertificateInUse | undefined;
}> {
  return optionsOf(await readFiles(settings));
}

function optionsOf({ ca, cert, key }: TlsFileContents): {
  readonly tls: ConnectionOptions;
  readonly inUse: CertificateInUse | undefined;
} {
  try {
    if (ca !== undefined) certificateBundle('RATE_LIMIT_TLS_CA', ca);
    const inUse =
      cert !== undefined && key !== undefined
        ? certificateAndKey(
            { cert: 'RATE_LIMIT_TLS_CERT', key: 'RATE_LIMIT_TLS_KEY' },
            { cert, key },
            new Date(),
          )
        : undefined;
    return {
      tls: {
        rejectUnauthorized: true,
        ...(ca !== undefined ? { ca } : {}),
        ...(cert !== undefined && key !== undefined ? { cert, key } : {}),
      },
      inUse,
    };
  } catch (error) {
    throw new StoreError((error as Error).message);
  }
}
