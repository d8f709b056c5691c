import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, type ServeSetup, startServe, stopChildren } from '../support/cli.js';
import { RUNTIMES, type RuntimeCommand } from '../support/runtimes.js';

/**
 * `KEEP_ALIVE_TIMEOUT_MS` (issue 35): a consumer, a gateway or a load balancer that keeps
 * a connection to the service idle for less than the timeout can reuse it without a reset,
 * and the service tells it the timeout (`Keep-Alive: timeout=N`). The timeout is set above
 * the five seconds that were once fixed, so this test fails on a listener that still closes
 * at 5 s; and the service does close the connection once the timeout has passed.
 *
 * Each connection is a raw TLS socket writing its own requests, so no client's pool policy
 * (Node's agent drops a socket a second before the server's stated timeout) decides what is
 * tested: the same socket sends again after idling one second less than the timeout.
 */

const KEEP_ALIVE_TIMEOUT_MS = 7_000;
const IDLE_MS = KEEP_ALIVE_TIMEOUT_MS - 1_000;
const CONNECTIONS = 200;
/** How late the service may close an idle connection and still count as keeping to its timeout. */
const CLOSE_MARGIN_MS = 5_000;

let dir: string;
let setup: ServeSetup;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-keep-alive-'));
  setup = prepareServe(dir);
});

afterAll(async () => {
  await stopChildren(children);
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
}

/** One keep-alive connection: requests written by hand, answers read off the same socket. */
class RawConnection {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  /** Why the socket ended ('end' from the server, or an error code), once it has. */
  ended: string | undefined;
  endedAt = 0;

  private constructor(private readonly socket: TLSSocket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.waiting?.();
    });
    const end = (why: string) => {
      if (this.ended !== undefined) return;
      this.ended = why;
      this.endedAt = performance.now();
      this.waiting?.();
    };
    socket.on('end', () => end('end'));
    socket.on('error', (error: NodeJS.ErrnoException) => end(error.code ?? error.message));
    socket.on('close', () => end('close'));
  }

  static async open(port: number): Promise<RawConnection> {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      ca: setup.ca,
      cert: setup.client.cert,
      key: setup.client.key,
    });
    await once(socket, 'secureConnect');
    return new RawConnection(socket);
  }

  /** Sends one GET and reads its whole answer; throws if the socket ends first. */
  async get(path: string): Promise<Answer> {
    if (this.ended !== undefined) throw new Error(`connection already ended (${this.ended})`);
    this.socket.write(
      `GET ${path} HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${setup.apiKey}\r\nauthorization: Bearer ${setup.token}\r\n\r\n`,
    );
    for (;;) {
      const answer = this.take();
      if (answer) return answer;
      if (this.ended !== undefined) throw new Error(`connection ended before the answer (${this.ended})`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = undefined;
    }
  }

  /** Resolves once the server has ended the socket. */
  async whenEnded(): Promise<void> {
    while (this.ended === undefined) {
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = undefined;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** One whole answer off the front of the buffer (Content-Length or chunked), if it is all there. */
  private take(): Answer | undefined {
    const headEnd = this.buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const [statusLine = '', ...lines] = this.buffered.subarray(0, headEnd).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const bodyStart = headEnd + 4;
    let end: number;
    if (headers['transfer-encoding'] === 'chunked') {
      const last = this.buffered.indexOf('\r\n0\r\n\r\n', bodyStart - 2);
      if (last < 0) return undefined;
      end = last + 7;
    } else {
      end = bodyStart + Number(headers['content-length'] ?? 0);
      if (this.buffered.length < end) return undefined;
    }
    this.buffered = this.buffered.subarray(end);
    return { status: Number(statusLine.split(' ')[1]), headers };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.concurrent.each(RUNTIMES)('KEEP_ALIVE_TIMEOUT_MS on $name', (runtime: RuntimeCommand) => {
  it(`keeps ${CONNECTIONS} connections idle ${IDLE_MS} ms and reuses each without a reset; closes them after ${KEEP_ALIVE_TIMEOUT_MS} ms`, async () => {
    const server = await startServe(
      { ...setup.env, KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS), RATE_LIMIT_DEFAULT: '100000/1s' },
      runtime,
    );
    children.push(server.child);
    const port = Number(new URL(server.url).port);
    const connections = await Promise.all(
      Array.from({ length: CONNECTIONS }, () => RawConnection.open(port)),
    );
    try {
      const rounds = await Promise.all(
        connections.map(async (connection) => {
          const sentAt = performance.now();
          const first = await connection.get('/case/X123456');
          await sleep(IDLE_MS);
          // On a loaded machine this client may wake after the timeout has passed: the service
          // may then close the connection, as it should, but never before the timeout, counted
          // from before the first request was sent (the service answered after that).
          const late = () => ({
            first,
            reused: false as const,
            heldMs: connection.endedAt - sentAt,
            how: connection.ended,
          });
          if (connection.ended !== undefined) return late();
          let second: Answer;
          try {
            second = await connection.get('/case/X123456/community-manager');
          } catch (error) {
            if (connection.ended !== undefined) return late();
            throw error;
          }
          const answeredAt = performance.now();
          await connection.whenEnded();
          return {
            first,
            second,
            reused: true as const,
            closedAfterMs: connection.endedAt - answeredAt,
            how: connection.ended,
          };
        }),
      );
      // None was closed before its timeout, however late this client was.
      const closedLate = rounds.filter((r) => !r.reused);
      for (const r of closedLate) expect(r.heldMs).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS);
      // Every connection this client reached in time answered twice, the second time after
      // idling a second short of the timeout; on an idle machine that is every one.
      const reused = rounds.filter((r) => r.reused);
      expect(reused.length).toBeGreaterThan(0);
      if (closedLate.length > 0)
        console.log(
          `${runtime.name}: ${closedLate.length} of ${CONNECTIONS} connections reached after the timeout (a loaded machine); each was held at least ${KEEP_ALIVE_TIMEOUT_MS} ms`,
        );
      expect(reused.map((r) => `${r.first.status} ${r.second.status}`)).toEqual(reused.map(() => '200 200'));
      // The timeout is told to the client, in seconds, on every keep-alive answer.
      const told = new Set(
        rounds.flatMap((r) => [
          r.first.headers['keep-alive'],
          ...(r.reused ? [r.second.headers['keep-alive']] : []),
        ]),
      );
      expect([...told]).toEqual([`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`]);
      // Then left idle, each was closed by the service, cleanly, once the timeout had passed.
      expect(new Set(rounds.map((r) => r.how))).toEqual(new Set(['end']));
      const closedAfter = reused.map((r) => r.closedAfterMs);
      expect(Math.min(...closedAfter)).toBeGreaterThanOrEqual(IDLE_MS);
      expect(Math.max(...closedAfter)).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + CLOSE_MARGIN_MS);
    } finally {
      for (const connection of connections) connection.destroy();
    }
  }, 60_000);
});
