// A module of its own, importing nothing: the configuration reads the defaults from here
// without loading the listener (node:https, @hono/node-server) into every CLI command.

/**
 * Timeouts and limits for the listener: a slow or oversized request is cut off rather than
 * holding a socket.
 */
export const SERVER_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  /**
   * How long an idle keep-alive connection is kept (`KEEP_ALIVE_TIMEOUT_MS`): longer than the
   * 60 s idle timeout of an AWS load balancer and of nginx's upstream keep-alive, so the side
   * that reuses connections always closes first. Clients are told it (`Keep-Alive: timeout=N`).
   */
  keepAliveTimeoutMs: 65_000,
  maxHeaderSize: 16_384,
  /**
   * How often Node checks open connections against the headers and request timeouts. Its
   * default is 30 s, which let a client trickling headers hold a socket for up to 40 s.
   */
  connectionsCheckingIntervalMs: 1_000,
} as const;

export type ServerLimits = { readonly [K in keyof typeof SERVER_LIMITS]: number };
