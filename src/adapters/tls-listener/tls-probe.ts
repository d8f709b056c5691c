import { connect } from 'node:tls';

export type ProbeOutcome =
  /** The handshake or the first read failed: no HTTP answer without a client certificate. */
  | 'refused'
  /** An HTTP answer came back to a client that showed no certificate. */
  | 'answered'
  /** Nothing within the time limit: not proven either way. */
  | 'timeout';

/**
 * Asks the listener at `host:port` for `/` over TLS *without* a client certificate, as an
 * attacker would. A listener that verifies client certificates ends the connection during
 * or right after the handshake (with TLS 1.3 the client learns of it at its first read);
 * one that silently ignores `requestCert` (Deno.serve does) answers. `serve` runs this
 * against itself before it says it is listening, so a runtime that drops the setting can
 * never serve without mutual TLS.
 */
export function probeWithoutCertificate(host: string, port: number, timeoutMs = 5000): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const socket = connect({
      host,
      port,
      servername: 'localhost',
      // Only the server's behaviour towards us matters here, not who it is.
      rejectUnauthorized: false,
    });
    const finish = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    let received = '';
    socket.on('secureConnect', () => {
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (received.startsWith('HTTP/')) finish('answered');
    });
    socket.on('error', () => finish('refused'));
    socket.on('close', () => finish(received.startsWith('HTTP/') ? 'answered' : 'refused'));
  });
}
