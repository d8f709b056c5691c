import { createConnection, type IpcNetConnectOpts, type TcpNetConnectOpts } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { AbstractConnector, type StandaloneConnectionOptions } from 'ioredis';

/** ioredis's own message for a connection ended before it was made (not exported by it). */
const CONNECTION_CLOSED = 'Connection is closed.';

/** ioredis's default `disconnectTimeout`, should the options given lack one. */
const DISCONNECT_TIMEOUT_MS = 2000;

type Stream = Awaited<ReturnType<AbstractConnector['connect']>>;

/**
 * ioredis's standalone connector (a host and port, or a path; TLS when `tls` is set, with its
 * options as given: ioredis builds none of its own), with one change: every stream it makes
 * keeps an `error` listener for good. ioredis listens with `once`, so a stream that fails
 * twice would throw its second error as an uncaught exception; Deno's TLS socket does, with
 * `write EPIPE` after the server refuses the client certificate, which would crash `serve`.
 * The first error still reaches ioredis; a later one of a stream already failed is dropped.
 *
 * The options are ioredis's own object (`redis.options`), read at each connection: a reload
 * that replaces `redis.options.tls` is used from the next connection on.
 */
export class RedisConnector extends AbstractConnector {
  private readonly options: StandaloneConnectionOptions;

  /** `options`: ioredis hands its own (`ConnectorConstructor` types them `unknown`). */
  constructor(options: unknown) {
    const given = options as StandaloneConnectionOptions;
    super(given.disconnectTimeout ?? DISCONNECT_TIMEOUT_MS);
    this.options = given;
  }

  connect(): Promise<Stream> {
    const { options } = this;
    const tls = options.tls;
    this.connecting = true;
    const target: Partial<TcpNetConnectOpts & IpcNetConnectOpts> = {};
    if (options.path) {
      target.path = options.path;
    } else {
      if (options.port != null) target.port = options.port;
      if (options.host != null) target.host = options.host;
      if (options.family != null) target.family = options.family;
    }
    if (tls) Object.assign(target, tls);
    // As ioredis does: the stream is made on the next tick, unless disconnect() came first.
    return new Promise((resolve, reject) => {
      process.nextTick(() => {
        if (!this.connecting) {
          reject(new Error(CONNECTION_CLOSED));
          return;
        }
        let stream: Stream;
        try {
          stream = tls ? tlsConnect(target) : createConnection(target as TcpNetConnectOpts);
        } catch (error) {
          reject(error);
          return;
        }
        this.stream = stream;
        keepErrorListener(stream, (error) => {
          // ioredis reads it when the stream failed before it listened itself.
          this.firstError = error;
        });
        resolve(stream);
      });
    });
  }
}

/**
 * Listens to `stream`'s errors for as long as it lives: the first is handed to `onFirst`,
 * any later one (a stream already failed, failing again) is absorbed instead of thrown.
 */
function keepErrorListener(stream: Stream, onFirst: (error: Error) => void): void {
  let failed = false;
  stream.on('error', (error: Error) => {
    if (failed) return;
    failed = true;
    onFirst(error);
  });
}
