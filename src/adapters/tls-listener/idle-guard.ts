import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';

export interface IdleGuardLimits {
  /** A connection must have sent a whole request head within this long of connecting. */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is ended after this long without a new request. */
  readonly keepAliveTimeoutMs: number;
}

interface Guarded {
  timer: ReturnType<typeof setTimeout> | undefined;
  inProgress: number;
}

/**
 * The slow-client limits for sockets handed to an HTTP server that did not accept them
 * itself (the `tls-handoff` listener). Bun's `node:http` enforces neither its headers
 * timeout nor its keep-alive timeout on such a socket, so a client trickling a request head
 * could hold a connection for ever. Here each handed-off socket has one timer: armed at the
 * handshake (headers timeout) and after each response (keep-alive timeout), cleared while a
 * request is being served. When it fires, a socket that has sent part of a request is
 * answered 408, as Node does, and ended. On Node this runs beside Node's own checks.
 */
export function guardHandedOffSockets(listener: NetServer, http: HttpServer, limits: IdleGuardLimits): void {
  const guarded = new WeakMap<Socket, Guarded>();
  const arm = (socket: Socket, state: Guarded, ms: number) => {
    clearTimeout(state.timer);
    const bytesAtArm = socket.bytesRead;
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (state.inProgress > 0 || socket.destroyed) return;
      if (socket.bytesRead > bytesAtArm) {
        socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      } else {
        socket.end();
      }
    }, ms);
    state.timer.unref();
  };
  listener.on('secureConnection', (socket: Socket) => {
    const state: Guarded = { timer: undefined, inProgress: 0 };
    guarded.set(socket, state);
    arm(socket, state, limits.headersTimeoutMs);
    socket.once('close', () => clearTimeout(state.timer));
  });
  http.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const state = guarded.get(socket);
    if (state === undefined) return;
    state.inProgress += 1;
    clearTimeout(state.timer);
    state.timer = undefined;
    response.once('close', () => {
      state.inProgress -= 1;
      if (state.inProgress === 0 && !socket.destroyed) arm(socket, state, limits.keepAliveTimeoutMs);
    });
  });
}
