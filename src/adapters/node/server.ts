import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';

export interface TlsFiles {
  /** PEM contents (not paths): server certificate chain, its key, the client CA bundle, an optional CRL. */
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string;
  readonly crl?: string;
}

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** Mutual TLS. Without it the listener is plain HTTP (tests and loopback tools only). */
  readonly tls?: TlsFiles;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Timeouts and limits for the listener: a slow or oversized request is cut off rather than
 * holding a socket.
 */
export const SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16_384,
} as const;

/**
 * Starts the Node listener for a web-standard fetch handler. With `tls`, it is HTTPS that
 * demands a client certificate signed by the client CA (and not on the CRL): a client
 * without one never completes the handshake, so never reaches the app.
 */
export async function startServer(
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  options: ListenOptions,
): Promise<RunningServer> {
  const tls = options.tls;
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve(
      {
        fetch,
        hostname: options.host,
        port: options.port,
        ...(tls
          ? {
              createServer: createHttpsServer,
              serverOptions: {
                cert: tls.cert,
                key: tls.key,
                ca: tls.clientCa,
                ...(tls.crl ? { crl: tls.crl } : {}),
                requestCert: true,
                rejectUnauthorized: true,
                minVersion: 'TLSv1.2' as const,
                honorCipherOrder: true,
                maxHeaderSize: SERVER_LIMITS.maxHeaderSize,
              },
            }
          : { serverOptions: { maxHeaderSize: SERVER_LIMITS.maxHeaderSize } }),
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  if ('headersTimeout' in server) {
    server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
    server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
    server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${tls ? 'https' : 'http'}://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  };
}
