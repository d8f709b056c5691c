import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The kernel's ephemeral port range, from which outgoing connections take their local port. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    if (Number(low) > 0 && Number(high) > 0) return [Number(low), Number(high)];
  } catch {
    // Not Linux: the IANA range, which most other systems use.
  }
  return [49152, 65535];
}

/** Whether a server can listen on `port` on loopback now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The lowest port chosen, above the well-known engines' (PostgreSQL 5432, Redis 6379). */
const LOWEST = 10_000;

/**
 * A loopback port free now, for a server a test starts, and may stop and start again, on a
 * fixed port (an instance behind a balancer, a Redis of its own). It is chosen below the
 * kernel's ephemeral range: a port from that range (what `listen(0)` gives) can be handed
 * to another test's outgoing connection (a load generator opens thousands) between now and
 * the server's bind, or while it restarts, and the server then fails with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  const [low, high] = ephemeralRange();
  // Below the range where there is room; else above it.
  const [from, to] = low - LOWEST >= 1_000 ? [LOWEST, low - 1] : [high + 1, 65_535];
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port found between ${from} and ${to}`);
}
