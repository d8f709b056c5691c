import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/**
 * What a server that took the connection and then failed it speaks, asked once at start so
 * that a configuration fault (`redis://` to a TLS-only port, `rediss://` to a plaintext one)
 * stops the start instead of passing for a Redis that is down. `plain`: it answered a Redis
 * `PING` in plaintext; `tls`: it completed a TLS handshake (its certificate is not trusted or
 * used: this probe sends nothing after the handshake); undefined: neither, within `timeoutMs`.
 */
export async function whatItSpeaks(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<'plain' | 'tls' | undefined> {
  if (await answersPlainPing(host, port, timeoutMs)) return 'plain';
  if (await completesTlsHandshake(host, port, timeoutMs)) return 'tls';
  return undefined;
}

function answersPlainPing(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    // `+PONG` or an error reply (`-NOAUTH …`): a Redis speaking plaintext.
    socket.once('data', (data) => done(data[0] === 0x2b || data[0] === 0x2d));
  });
}

function completesTlsHandshake(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    // Only whether it speaks TLS is asked: nothing is sent after the handshake.
    const socket = tlsConnect({ host, port, rejectUnauthorized: false });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('secureConnect', () => done(true));
  });
}
