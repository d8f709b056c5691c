import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepAliveAgent, prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { RUNTIMES, type RuntimeCommand } from '../support/runtimes.js';
import { openSqlite } from '../support/sqlite.js';

/**
 * A rolling restart behind Debian's HAProxy 2.6 with its default health-check and retry
 * settings (inter 2 s, fall 3, rise 2, retries 3, no redispatch), TCP mode (mutual TLS ends
 * at the service), checking `/health/ready` on the management port. Two `serve` processes
 * with the default SHUTDOWN_DELAY_MS, keep-alive load, each restarted in turn: no request
 * fails, and every answered request is in the trail once; `serve` on Node and on Bun.
 * `.ci/run` installs HAProxy.
 */
const HAPROXY = '/usr/sbin/haproxy';
const available = existsSync(HAPROXY);
if (!available && process.env.CI) throw new Error('haproxy is not installed: .ci/run installs it');

// Node and Bun. Deno resets a connection now and then in this very test (see "Runtimes" in
// the README); HAPROXY_RUNTIMES=node,bun,deno runs it there too, to reproduce that.
const ON = (process.env.HAPROXY_RUNTIMES ?? 'node,bun').split(',');

describe.runIf(available).each(RUNTIMES.filter((runtime) => ON.includes(runtime.name)))(
  'a rolling restart behind HAProxy 2.6 with its defaults, serve on $name',
  (runtime: RuntimeCommand) => {
    const LOOPS = 8;
    let dir: string;
    let setup: ServeSetup;
    let haproxy: ChildProcess;
    let front: number;
    const ports = { a: { port: 0, management: 0 }, b: { port: 0, management: 0 } };
    const children: Record<'a' | 'b', ChildProcess | undefined> = { a: undefined, b: undefined };

    type Outcome = { status: number; requestId: string } | { error: string };

    /** One request on a keep-alive agent; an error is reported by its code, never thrown. */
    function get(agent: Agent): Promise<Outcome> {
      return new Promise((resolve) => {
        const req = request(
          `https://localhost:${front}/case/X123456`,
          {
            agent,
            headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
            timeout: 15_000,
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, requestId: String(res.headers['x-request-id']) }),
            );
            res.on('error', (error: NodeJS.ErrnoException) =>
              resolve({ error: error.code ?? error.message }),
            );
          },
        );
        req.on('timeout', () => req.destroy(Object.assign(new Error('hang'), { code: 'HANG' })));
        req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
        req.end();
      });
    }

    /** Starts (or restarts) one instance on its fixed ports, with every shutdown setting at its default. */
    async function startInstance(name: 'a' | 'b'): Promise<void> {
      const { SHUTDOWN_DELAY_MS: _test, ...env } = setup.env;
      const started = await startServe(
        {
          ...env,
          PORT: String(ports[name].port),
          MANAGEMENT_PORT: String(ports[name].management),
          RATE_LIMIT_DEFAULT: '1000000/1s',
        },
        runtime,
      );
      children[name] = started.child;
    }

    async function restart(name: 'a' | 'b'): Promise<void> {
      const child = children[name] as ChildProcess;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      // Deno's child_process reports a child that handled SIGTERM and exited 0 as killed by it.
      if (runtime.name !== 'deno') expect(code).toBe(0);
      // A replacement takes a while to come up (a new pod, a new process): here, 4 s with
      // nothing listening, which a balancer that has not yet taken it out would send to.
      await new Promise((r) => setTimeout(r, 4000));
      await startInstance(name);
      // HAProxy takes it back after two good checks (rise 2, inter 2 s).
      await new Promise((r) => setTimeout(r, 5000));
    }

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), `case-read-haproxy-${runtime.name}-`));
      setup = prepareServe(dir);
      for (const name of ['a', 'b'] as const)
        ports[name] = { port: await freePort(), management: await freePort() };
      front = await freePort();
      await startInstance('a');
      await startInstance('b');
      const conf = join(dir, 'haproxy.cfg');
      writeFileSync(
        conf,
        `
defaults
  mode tcp
  timeout connect 2s
  timeout client 60s
  timeout server 60s
frontend case_read
  bind 127.0.0.1:${front}
  default_backend instances
backend instances
  option httpchk
  http-check send meth GET uri /health/ready
  http-check expect status 200
  server a 127.0.0.1:${ports.a.port} check port ${ports.a.management}
  server b 127.0.0.1:${ports.b.port} check port ${ports.b.management}
`,
      );
      haproxy = spawn(HAPROXY, ['-db', '-f', conf], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, 4500));
    }, 60_000);
    afterAll(async () => {
      haproxy?.kill('SIGKILL');
      for (const child of Object.values(children)) child?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });

    it('each instance restarted in turn under keep-alive load: no failed request, every answer audited once', async () => {
      const agent = keepAliveAgent(setup, LOOPS);
      const outcomes: Outcome[] = [];
      let running = true;
      const loop = async () => {
        while (running) outcomes.push(await get(agent));
      };
      const loops = Array.from({ length: LOOPS }, loop);
      await new Promise((r) => setTimeout(r, 1000));
      await restart('a');
      await restart('b');
      running = false;
      await Promise.all(loops);
      agent.destroy();

      const failures = outcomes.filter((o) => !('status' in o) || o.status !== 200);
      // The numbers the README quotes.
      console.log(
        `rolling restart on ${runtime.name}: ${outcomes.length} requests, ${failures.length} failed`,
      );
      expect(failures).toEqual([]);
      expect(outcomes.length).toBeGreaterThan(500);

      const verify = runCli(['audit', 'verify'], setup.env);
      expect(verify.status).toBe(0);
      // Straight from the trail's file: thousands of records are more than a CLI page.
      const db = openSqlite((setup.env.AUDIT_STORE as string).replace(/^sqlite:/, ''), { readonly: true });
      const recorded = (db.prepare('SELECT request_id FROM audit').all() as { request_id: string }[]).map(
        (r) => r.request_id,
      );
      db.close();
      expect(new Set(recorded).size).toBe(recorded.length);
      const answered = new Set(recorded);
      expect(outcomes.filter((o) => 'requestId' in o && !answered.has(o.requestId))).toEqual([]);
    }, 120_000);
  },
);
