/**
 * The witness's listener: HTTPS with the server's certificate (a log is any client; the
 * checkpoint's signature is the only authentication tlog-witness has), or plain HTTP where
 * the configuration allows it (bound to loopback, behind a proxy that ends TLS). Keep-alive,
 * as the spec asks of witnesses; a body over the bound is refused without being read to its
 * end; slow clients are cut off.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { MAX_BODY_BYTES, type WitnessRequest, type WitnessResponse } from './http.js';

/** The server's certificate chain and key, PEM. */
export interface WitnessTls {
  readonly cert: string;
  readonly key: string;
}

export interface WitnessListenOptions {
  readonly host: string;
  readonly port: number;
  /** HTTPS; without it, plain HTTP. */
  readonly tls?: WitnessTls;
  /** The TLS 1.2 suites offered (AEAD with forward secrecy, as the service's listener offers). */
  readonly ciphers?: string;
}

export interface RunningWitness {
  readonly url: string;
  /** Uses new TLS files for the handshakes from now on (HTTPS only). */
  readonly setTls?: (tls: WitnessTls) => void;
  /** Stops accepting, lets requests in progress finish (within `graceMs`), then resolves. */
  close(graceMs: number): Promise<void>;
}

/** Limits on a request: slow or oversized ones are cut off rather than holding a socket. */
const LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxHeaderSize: 16_384,
} as const;

/** The body, up to {@link MAX_BODY_BYTES}; `too-large` as soon as it is known to be over (by its length, or as read). */
function readBody(request: IncomingMessage): Promise<WitnessRequest['body']> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.resolve('too-large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > MAX_BODY_BYTES) {
        request.off('data', onData);
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    request.once('error', reject);
  });
}

function write(response: ServerResponse, answer: WitnessResponse, head: boolean, close: boolean): void {
  const body = Buffer.from(answer.body, 'utf8');
  response.writeHead(answer.status, {
    ...answer.headers,
    'content-length': String(body.length),
    'cache-control': 'no-store',
    ...(close ? { connection: 'close' } : {}),
  });
  response.end(head ? undefined : body);
}

/** Starts the listener for `handle`; resolves once it is bound. */
export async function startWitnessServer(
  handle: (request: WitnessRequest) => Promise<WitnessResponse>,
  options: WitnessListenOptions,
): Promise<RunningWitness> {
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const method = request.method ?? 'GET';
    void (async () => {
      let body: WitnessRequest['body'];
      try {
        body = method === 'POST' ? await readBody(request) : new Uint8Array();
      } catch {
        request.destroy();
        return;
      }
      const answer = await handle({ method, path, body }).catch(
        (): WitnessResponse => ({
          status: 500,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
          body: 'internal error\n',
        }),
      );
      // A body left unread is not read: the connection ends with the answer.
      write(response, answer, method === 'HEAD', body === 'too-large');
      if (body === 'too-large') response.once('finish', () => request.socket.destroySoon());
    })();
  };
  const serverOptions = { maxHeaderSize: LIMITS.maxHeaderSize };
  const server: Server = options.tls
    ? createHttpsServer(
        {
          ...serverOptions,
          cert: options.tls.cert,
          key: options.tls.key,
          minVersion: 'TLSv1.2',
          ...(options.ciphers !== undefined ? { ciphers: options.ciphers, honorCipherOrder: true } : {}),
        },
        onRequest,
      )
    : createHttpServer(serverOptions, onRequest);
  server.headersTimeout = LIMITS.headersTimeoutMs;
  server.requestTimeout = LIMITS.requestTimeoutMs;
  server.keepAliveTimeout = LIMITS.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const tlsServer = server as unknown as { setSecureContext(options: object): void };
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    ...(options.tls
      ? {
          setTls: (tls: WitnessTls) =>
            tlsServer.setSecureContext({
              cert: tls.cert,
              key: tls.key,
              minVersion: 'TLSv1.2',
              ...(options.ciphers !== undefined ? { ciphers: options.ciphers, honorCipherOrder: true } : {}),
            }),
        }
      : {}),
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
