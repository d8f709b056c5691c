// keepalive (the default): the full service (mutual TLS, API key, rate limit, bearer,
// permission, SQLite lookup, audit) against bare node:https and bare Hono answering the same
// body, over keep-alive connections; --baseline DIR adds `serve` from another built checkout.
import { againstBare } from '../lib/against-bare.mjs';

export async function keepalive(bench) {
  return againstBare(bench, 'keepalive', { reconnect: false });
}
