// handshake: as keepalive, but a new TLS connection (a full handshake) for every request.
import { againstBare } from '../lib/against-bare.mjs';

export async function handshake(bench) {
  return againstBare(bench, 'handshake', { reconnect: true });
}
