import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Timeouts and limits for the listener: a slow or oversized request is cut off rather than
 * holding a socket. Node's defaults are generous; a service called by other services needs
 * less.
 */
export const SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16_384,
} as const;

/**
 * Starts the Node listener for a web-standard fetch handler. Plain HTTP on loopback for
 * now; mutual TLS is added here (node:https with requestCert), not in the app.
 */
export async function startServer(
  fetch: (request: Request) => Response | Promise<Response>,
  options: ListenOptions,
): Promise<RunningServer> {
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve(
      {
        fetch,
        hostname: options.host,
        port: options.port,
        serverOptions: { maxHeaderSize: SERVER_LIMITS.maxHeaderSize },
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
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  };
}
