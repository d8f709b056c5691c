import type { ConnectionOptions } from 'node:tls';
import { type CertificateInUse, StoreError } from '../../ports/stores.js';
import { certificateAndKey, certificateBundle } from '../shared/certificates.js';
import { readNamedFile, readSecretFile } from '../shared/secret-files.js';
import type { RedisSettings } from './settings.js';

const fileOf = (variable: string, path: string | undefined): string | undefined =>
  path === undefined ? undefined : readNamedFile(variable, path, (message) => new StoreError(message));

/**
 * The `rediss://` connection's TLS options from `RATE_LIMIT_TLS_*`, read and checked (the CA
 * bundle parses, the key is the certificate's and the certificate valid now), and the client
 * certificate they present. The host name is always verified. Throws {@link StoreError}
 * naming the variable at fault; used at start and at each reload.
 */
export function readRedisTls(settings: RedisSettings): {
  readonly tls: ConnectionOptions;
  readonly inUse: CertificateInUse | undefined;
} {
  const ca = fileOf('RATE_LIMIT_TLS_CA', settings.tlsCaFile);
  const cert = fileOf('RATE_LIMIT_TLS_CERT', settings.tlsCertFile);
  // A private key: refused when others may read it (decisions §17).
  const key =
    settings.tlsKeyFile === undefined
      ? undefined
      : readSecretFile('RATE_LIMIT_TLS_KEY', settings.tlsKeyFile, (message) => new StoreError(message));
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
