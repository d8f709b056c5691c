import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TlsOptions, type Server as TlsServer } from 'node:tls';
import { createAdaptorServer, type ServerType, serve } from '@hono/node-server';
import { guardHandedOffSockets } from './idle-guard.js';
import { SERVER_LIMITS, type ServerLimits } from './limits.js';
import { type ClientCertificates, type TlsFiles, tlsOptionsOf } from './tls-options.js';

export { type ClientCertificates, TLS_CIPHERS, type TlsFiles } from './tls-options.js';

/**
 * How mutual TLS is served; both give the app the verified peer certificate on the request's
 * socket (see `peer-certificate.ts`):
 * - `https`: `node:https`, a TLS server that is itself the HTTP server (Node, Deno);
 * - `tls-handoff`: a `node:tls` server whose verified sockets are handed to a `node:http`
 *   server. Bun needs it: its `node:https` gives the app a socket without the certificate.
 */
export type TlsListenerKind = 'https' | 'tls-handoff';

export interface ListenOptions {
  readonly host: string;
  readonly port: number;
  /** Mutual TLS. Without it the listener is plain HTTP (tests and loopback tools only). */
  readonly tls?: TlsFiles;
  /** With `tls`: `required` (mutual TLS, unless given) or `none` (the SAR service's door: its clientCa and crl unused). */
  readonly clientCertificates?: ClientCertificates;
  /** Which TLS listener; `https` unless given. */
  readonly tlsListener?: TlsListenerKind;
  /** Other limits than {@link SERVER_LIMITS}: the operator's keep-alive timeout, tighter ones in tests. */
  readonly limits?: Partial<ServerLimits>;
}

/**
 * What {@link RunningServer.drain} did: connections that ended by themselves, those cut at
 * the grace, and the app's handlers still running when the grace ended (their clients may
 * have gone long before).
 */
export interface DrainResult {
  readonly closedGracefully: number;
  readonly destroyedAtGrace: number;
  readonly unfinishedAtGrace: number;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /**
   * True when the listener completes a TLS handshake only with a client certificate that
   * verifies against the client CA. `serve` refuses to run on a listener where it is false.
   */
  readonly verifiesClientCertificates: boolean;
  /**
   * Graceful drain: stops accepting connections at once; every response from now on carries
   * `Connection: close`; a keep-alive connection that stays idle for `idleCloseMs` is closed;
   * in-flight requests finish. Whatever is still open after `graceMs` (a stuck request, a
   * half-open socket) is destroyed. Resolves when no connection is left and every request
   * the app began has been handled, even one whose client went away (its audit record is
   * written before the stores close), or when the grace ends.
   */
  drain(graceMs: number, idleCloseMs?: number): Promise<DrainResult>;
  /**
   * Uses new TLS files for every handshake from now on; connections already open keep the
   * ones they were made with. Throws, keeping the files in use, when the runtime's TLS
   * cannot load them (a CRL that does not parse, say). Absent on a plain-HTTP listener.
   */
  readonly setTls?: (files: TlsFiles) => void;
  /** Stops at once: no new connections, idle ones closed, resolves when the rest have ended. */
  close(): Promise<void>;
}

/** The options every HTTP server of the listener is created with. */
const httpOptionsOf = (limits: ServerLimits) => ({
  maxHeaderSize: limits.maxHeaderSize,
  connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
});

/** After a drain begins, how long a keep-alive connection may sit idle before it is closed. */
const DRAIN_IDLE_CLOSE_MS = 1000;

/**
 * Starts the Node listener for a web-standard fetch handler. With `tls`, it is HTTPS that
 * demands a client certificate signed by the client CA (and not on the CRL): a client
 * without one never completes the handshake, so never reaches the app. With
 * `clientCertificates: 'none'` it is HTTPS with the server's certificate alone.
 */
export async function startServer(
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  options: ListenOptions,
): Promise<RunningServer> {
  const tls = options.tls;
  const limits: ServerLimits = { ...SERVER_LIMITS, ...options.limits };
  const clientCertificates = options.clientCertificates ?? 'required';
  const handlers = countHandlers(fetch);
  const tlsOptions = tls && tlsOptionsOf(tls, clientCertificates);
  const { listener, http } =
    tlsOptions && options.tlsListener === 'tls-handoff'
      ? await listenTlsHandoff(handlers.fetch, options, tlsOptions, limits)
      : await listenHono(handlers.fetch, options, tlsOptions, limits);
  http.headersTimeout = limits.headersTimeoutMs;
  http.requestTimeout = limits.requestTimeoutMs;
  http.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // The hand-off is exactly the case where the accepting server is not the HTTP server.
  const handedOff = (listener as unknown) !== http;
  const connections = trackConnections(listener, http, tls !== undefined, handedOff, handlers);
  const address = listener.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${tls ? 'https' : 'http'}://${host}:${address.port}`,
    port: address.port,
    verifiesClientCertificates: tls !== undefined && clientCertificates === 'required',
    drain: (graceMs, idleCloseMs = DRAIN_IDLE_CLOSE_MS) => connections.drain(graceMs, idleCloseMs),
    close: () => connections.close(),
    // Both listeners are a tls.Server (https.Server is one), whose secure context can be replaced.
    ...(tls
      ? {
          setTls: (files: TlsFiles) =>
            (listener as TlsServer).setSecureContext(tlsOptionsOf(files, clientCertificates)),
        }
      : {}),
  };
}

type HttpServer = ReturnType<typeof createHttpServer>;

/**
 * How a listener starts: `fetch` served at `options`' address, over TLS with `tls` (when
 * given), within `limits`. It gives the server that accepts connections and the HTTP server
 * that answers on them: one and the same but for the hand-off.
 */
type Listen<Tls extends TlsOptions | undefined> = (
  fetch: (request: Request, env: unknown) => Response | Promise<Response>,
  options: ListenOptions,
  tls: Tls,
  limits: ServerLimits,
) => Promise<{ listener: NetServer; http: HttpServer }>;

/** Plain HTTP, or `node:https`: one server that both accepts and speaks HTTP. */
const listenHono: Listen<TlsOptions | undefined> = async (fetch, options, tls, limits) => {
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve(
      {
        fetch,
        hostname: options.host,
        port: options.port,
        ...(tls
          ? {
              createServer: createHttpsServer,
              serverOptions: { ...tls, ...httpOptionsOf(limits) },
            }
          : { serverOptions: httpOptionsOf(limits) }),
      },
      () => resolve(s),
    );
    s.once('error', reject);
  });
  return { listener: server as NetServer, http: server as HttpServer };
};

/**
 * `node:tls` accepts and verifies; each socket that completed the handshake is handed to a
 * `node:http` server that never listens itself. A client without a certificate from the
 * client CA never completes the handshake, so never reaches HTTP (where one is required).
 */
const listenTlsHandoff: Listen<TlsOptions> = async (fetch, options, tls, limits) => {
  const http = createAdaptorServer({
    fetch,
    createServer: createHttpServer,
    serverOptions: httpOptionsOf(limits),
  }) as HttpServer;
  let listener: NetServer;
  try {
    listener = createTlsServer(tls, (socket) => {
      http.emit('connection', socket);
    });
  } catch (error) {
    // Bun's TLS cannot load a CRL at all. Starting without it would accept revoked
    // certificates: refuse, and say what to use instead.
    if (tls.crl === undefined) throw error;
    throw new Error(
      `TLS_CRL cannot be loaded by this runtime's TLS (${(error as Error).message}); leave TLS_CRL unset here and revoke certificates with \`case-read certs revoke SERIAL\`, which the service checks on every request`,
    );
  }
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, options.host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  // Node's HTTP server starts its own timeout checks when it is 'listening'; Bun's has none
  // for a handed-off socket, so the guard applies the same limits itself.
  http.emit('listening');
  guardHandedOffSockets(listener, http, limits);
  return { listener, http };
};

/**
 * Stops accepting and calls back once every connection has ended: net.Server's own close.
 * (http.Server's close also ends idle keep-alive connections at once, racing a client that
 * is about to send on one: that is how requests were lost.) Bun's http.Server is not a
 * net.Server; its own close is the one it has.
 */
function closeListener(listener: NetServer, done: (error?: Error) => void): void {
  if (listener instanceof NetServer) NetServer.prototype.close.call(listener, done);
  else (listener as { close(callback: (error?: Error) => void): void }).close(done);
}

/** The app's handlers still running, counted whether or not their client is still connected. */
interface Handlers {
  readonly running: () => number;
  /** Resolves once no handler is running. */
  readonly settled: () => Promise<void>;
}

/**
 * The app's fetch, counted from the call until its answer (or failure) is settled. A client
 * that disconnects mid-request ends its connection but not the handler, which goes on to
 * write the request's audit record: a drain that waited for connections alone let the
 * service close its stores under it, and the record was lost.
 */
function countHandlers<E>(fetch: (request: Request, env: E) => Response | Promise<Response>): Handlers & {
  readonly fetch: (request: Request, env: E) => Promise<Response>;
} {
  let running = 0;
  let waiting: (() => void)[] = [];
  const settle = () => {
    running -= 1;
    if (running > 0 || waiting.length === 0) return;
    const resolved = waiting;
    waiting = [];
    for (const resolve of resolved) resolve();
  };
  return {
    fetch: (request, env) => {
      running += 1;
      let answer: Response | Promise<Response>;
      try {
        answer = fetch(request, env);
      } catch (error) {
        settle();
        return Promise.reject(error);
      }
      return Promise.resolve(answer).then(
        (response) => {
          settle();
          return response;
        },
        (error: unknown) => {
          settle();
          throw error;
        },
      );
    },
    running: () => running,
    settled: () =>
      running === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

/** Requests in progress on an HTTP-level socket (the TLS socket on HTTPS). */
const inProgress = Symbol('requestsInProgress');
type HttpSocket = Socket & { [inProgress]?: number };

/**
 * Follows every connection (the raw TCP socket, so a half-open or mid-handshake one is
 * known too, and the HTTP-level socket) and how many requests each is serving, so a drain
 * can close exactly the idle ones and cut only what is left at the end of the grace.
 */
function trackConnections(
  listener: NetServer,
  httpServer: HttpServer,
  isTls: boolean,
  /** The HTTP server did not accept its sockets itself (the hand-off): idle ends are ours. */
  handedOff: boolean,
  handlers: Handlers,
) {
  const raw = new Set<Socket>();
  const http = new Set<HttpSocket>();
  let draining = false;
  const follow = (set: Set<Socket>) => (socket: Socket) => {
    set.add(socket);
    socket.once('close', () => set.delete(socket));
  };
  listener.on('connection', follow(raw));
  // On TLS the HTTP parser reads the TLS socket of 'secureConnection'; on HTTP, the raw one.
  listener.on(isTls ? 'secureConnection' : 'connection', follow(http));

  // Runs before the app's listener, so the header is in place whenever the app answers.
  httpServer.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as HttpSocket;
    socket[inProgress] = (socket[inProgress] ?? 0) + 1;
    if (draining) {
      response.setHeader('Connection', 'close');
      socket.setTimeout(0); // no idle timer while a request is in progress
    }
    response.once('close', () => {
      socket[inProgress] = (socket[inProgress] ?? 1) - 1;
    });
  });

  return {
    drain(graceMs: number, idleCloseMs: number): Promise<DrainResult> {
      draining = true;
      const open = raw.size;
      return new Promise((resolve) => {
        let destroyedAtGrace = 0;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const graceOver = new Promise<void>((over) => {
          timer = setTimeout(() => {
            destroyedAtGrace = raw.size;
            for (const socket of [...http, ...raw]) socket.destroy();
            over();
          }, graceMs);
          timer.unref();
        });
        closeListener(listener, () => {
          // A handler whose client went away may still be running: wait for it, within the
          // grace; past it, what the app is still handling is left to its own deadline.
          void Promise.race([handlers.settled(), graceOver]).then(() => {
            clearTimeout(timer);
            resolve({
              closedGracefully: open - destroyedAtGrace,
              destroyedAtGrace,
              unfinishedAtGrace: handlers.running(),
            });
          });
        });
        // An idle keep-alive connection is ended once it has stayed idle for idleCloseMs:
        // the HTTP server's own 'timeout' handler ends it when no request is in progress.
        // Bun's has none for a handed-off socket, so there the end is ours, and only for a
        // socket that has read nothing since (a request may be on its way).
        for (const socket of http) {
          if (socket[inProgress]) continue;
          socket.setTimeout(idleCloseMs);
          if (!handedOff) continue;
          let readSoFar = socket.bytesRead;
          socket.on('timeout', () => {
            if (!socket[inProgress] && socket.bytesRead === readSoFar) socket.end();
            readSoFar = socket.bytesRead;
          });
        }
      });
    },
    /** Stops at once: no new connections, idle ones closed, resolves when the rest have ended. */
    close(): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        closeListener(listener, (error?: Error) => {
          if (error) reject(error);
          else resolve();
        });
        for (const socket of http) if (!socket[inProgress]) socket.destroy();
      });
    },
  };
}
