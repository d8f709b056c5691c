import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, type ServeSetup, startServe, stopChildren } from '../support/cli.js';
import { consumerAgent, httpsRequest } from '../support/https-client.js';

/**
 * A hostile upstream cannot exhaust the service's memory (issue 36): `serve` with the
 * upstream case store in front of a stand-in that answers 200 and then streams hundreds of
 * MiB. Each read gets 502 `upstream-failed`, within the deadline, and the process's peak
 * resident memory (VmHWM, reset before the bodies) stays within 64 MiB of what it was idle.
 */

const MIB = 1024 * 1024;
const CHUNK = Buffer.alloc(MIB, 0x78); // 'x': never to be seen in a log
const GROWTH_ALLOWED = 64 * MIB;

let dir: string;
let setup: ServeSetup;
let stub: Server;
const children: ChildProcess[] = [];

/** Streams `mib` MiB of a JSON string after a 200, as fast as the reader takes it. */
function streamBody(res: ServerResponse, mib: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"personalDetails":"');
  let sent = 0;
  const more = () => {
    while (sent < mib && !res.destroyed) {
      sent += 1;
      if (!res.write(CHUNK)) return void res.once('drain', more);
    }
    if (!res.destroyed) res.end('"}');
  };
  more();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-upstream-body-'));
  setup = prepareServe(dir);
  stub = createServer((req, res) => {
    const mib = Number(/^\/case\/B(\d{6})$/.exec(req.url ?? '')?.[1] ?? 0);
    streamBody(res, mib);
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await stopChildren(children);
  stub.closeAllConnections();
  await new Promise((resolve) => stub.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** VmHWM (peak) and VmRSS of a process, in bytes. */
function memoryOf(pid: number): { peak: number; resident: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) * 1024;
  return { peak: kib('VmHWM'), resident: kib('VmRSS') };
}

describe('the upstream case store in front of an upstream that sends too much', () => {
  it('a 400 MiB body, then twenty 120 MiB bodies at once: each 502 within the deadline, peak memory within 64 MiB of idle', async () => {
    const port = (stub.address() as AddressInfo).port;
    const server = await startServe({
      ...setup.env,
      CASE_STORE: `http://127.0.0.1:${port}`,
      REQUEST_DEADLINE_MS: '5000',
      RATE_LIMIT_DEFAULT: '100000/1s',
    });
    children.push(server.child);
    const pid = server.child.pid ?? 0;
    const agent = consumerAgent({ maxSockets: 32, ca: setup.ca, ...setup.client });
    const read = async (crn: string) => {
      const started = performance.now();
      const response = await httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}/case/${crn}`, {
        ca: setup.ca,
        ...setup.client,
        agent,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      });
      return {
        status: response.status,
        type: (response.json() as { type?: string }).type,
        ms: performance.now() - started,
      };
    };
    try {
      // Idle: started, and a few small failing reads (1 MiB bodies, at the default limit) behind it.
      for (let i = 0; i < 5; i++) expect((await read('B000001')).status).toBe(502);
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // the peak starts again from here
      const idle = memoryOf(pid);

      const one = await read('B000400');
      const twenty = await Promise.all(Array.from({ length: 20 }, () => read('B000120')));
      for (const answer of [one, ...twenty]) {
        expect(answer).toMatchObject({ status: 502, type: 'urn:case-read:problem:upstream-failed' });
        expect(answer.ms).toBeLessThan(5000);
      }
      const after = memoryOf(pid);
      process.stdout.write(
        `upstream-body: idle ${Math.round(idle.resident / MIB)} MiB, peak ${Math.round(after.peak / MIB)} MiB, after ${Math.round(after.resident / MIB)} MiB\n`,
      );
      expect(after.peak - idle.resident).toBeLessThanOrEqual(GROWTH_ALLOWED);
      expect(after.resident - idle.resident).toBeLessThanOrEqual(GROWTH_ALLOWED);

      // Logged: the limit and what was seen, never the body. The log is written in batches:
      // wait for the lines (a busy machine flushed 16 of 21 by the time the answers were in).
      const refusals = () =>
        server
          .output()
          .split('\n')
          .filter((line) => line.includes('UPSTREAM_MAX_BODY_BYTES (1048576)')).length;
      await expect.poll(refusals, { timeout: 10_000 }).toBeGreaterThanOrEqual(21);
      expect(server.output()).not.toContain('xxxxxxxx');
    } finally {
      agent.destroy();
    }
  }, 60_000);
});
