import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/**
 * Keeps the benchmark harness working. It asserts that the harness runs every scenario and
 * reports, never how fast anything was: speed is judged from `npm run bench` output.
 */
/** `node bench/run.mjs --smoke SCENARIO...`, as `npm run bench` would run it. */
const smokeRun = (...scenarios: string[]) =>
  spawnSync(process.execPath, ['bench/run.mjs', '--smoke', ...scenarios], {
    cwd: ROOT,
    encoding: 'utf8',
    // Generous: the run takes about 40 s on this 2-core machine with nothing beside it.
    timeout: 240_000,
    env: { PATH: process.env.PATH ?? '' },
  });

const SCENARIOS = [
  'keepalive',
  'handshake',
  'scale',
  'token',
  'engines',
  'audit',
  'upstream',
  'runtimes',
  'checkpoints',
  'tls-stores',
  'subject-access',
] as const;

interface Saved {
  smoke: boolean;
  results: { scenario: string; totals?: Record<string, { non2xx: number; errors: number }> }[];
}

describe('npm run bench -- --smoke', () => {
  // One run of every scenario on one set of fixtures; each test below reads its part.
  let result: ReturnType<typeof smokeRun>;
  let saved: Saved;
  beforeAll(() => {
    result = smokeRun(...SCENARIOS);
    const file = /^wrote (.+)$/m.exec(result.stdout ?? '')?.[1] ?? '';
    saved = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as Saved)
      : { smoke: false, results: [] };
  }, 250_000);

  it('runs every scenario against real servers, reports ratios, and writes a results file', () => {
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    for (const scenario of SCENARIOS) expect(result.stdout).toContain(`== ${scenario}`);
    expect(result.stdout).toMatch(/^bare +\d+ req\/s/m);
    expect(result.stdout).toMatch(/^service +\d+ req\/s/m);
    expect(result.stdout).toMatch(/^keepalive ratio \d+(\.\d+)?$/m);
    expect(result.stdout).toMatch(/^handshake ratio \d+(\.\d+)?$/m);
    expect(result.stdout).toMatch(/^p99 ratio large\/small \d+(\.\d+)?$/m);
    expect(lines.at(-2)).toMatch(/^ratio \d+(\.\d+)?$/);
    expect(lines.at(-1)).toMatch(/^cpu ratio \d+(\.\d+)?$/);
    expect(result.stdout).toMatch(/^hono +\d+ req\/s .* cpu \d+ µs\/req {2}generator \d+% of a core$/m);
    expect(result.stdout).toMatch(/^hono cpu ratio \d+(\.\d+)?$/m);
    expect(result.stdout).toMatch(/^framework cpu ratio \d+(\.\d+)?$/m);
    expect(saved.smoke).toBe(true);
    expect(saved.results.map((r) => r.scenario)).toEqual([...SCENARIOS]);
    // Every request in every scenario was answered 2xx: the harness measured real successes.
    for (const r of saved.results) for (const t of Object.values(r.totals ?? {})) expect(t.non2xx).toBe(0);
  });

  it('the engines, tls-stores, audit, upstream and runtimes scenarios (PostgreSQL, Redis, over TLS too, an upstream, Bun, Deno): every request answered 2xx', () => {
    expect(result.stdout).toMatch(/^local +\d+ req\/s .* cpu \d+ µs\/req {2}generator \d+% of a core$/m);
    expect(result.stdout).toMatch(/^shared +\d+ req\/s .* cpu \d+ µs\/req {2}generator \d+% of a core$/m);
    expect(result.stdout).toMatch(/^cpu per request shared\/local \d+(\.\d+)?$/m);
    for (const runtime of ['node', 'bun', 'deno'])
      expect(result.stdout).toMatch(new RegExp(`^${runtime} +\\d+ req/s .* cpu \\d+ µs/req`, 'm'));
    for (const store of ['sqlite1', 'sqlite2', 'postgres1', 'postgres2'])
      expect(result.stdout).toMatch(new RegExp(`^${store} +\\d+ appends/s \\(chain verified\\)$`, 'm'));
    expect(result.stdout).toMatch(
      /^added latency -?\d+(\.\d+)? ms \(mean, one connection\); added p50 -?\d+(\.\d+)? ms at \d+ connections;/m,
    );
    // The same engines in plaintext and over verified TLS (PostgreSQL and Redis of the bench's own).
    expect(result.stdout).toMatch(/^tls +\d+ req\/s .* cpu \d+ µs\/req {2}generator \d+% of a core$/m);
    expect(result.stdout).toMatch(/^cpu per request tls\/plaintext \d+(\.\d+)?$/m);
    for (const [scenario, servers] of [
      ['tls-stores', 2],
      ['engines', 2],
      ['upstream', 2],
      ['runtimes', 3],
    ] as const) {
      const found = saved.results.find((r) => r.scenario === scenario);
      expect(Object.keys(found?.totals ?? {})).toHaveLength(servers);
      for (const t of Object.values(found?.totals ?? {})) expect(t).toMatchObject({ non2xx: 0, errors: 0 });
    }
  });

  it('the checkpoints scenario: without and with a signing key, every request answered, the checkpoints counted', () => {
    for (const name of ['off', 'on', 'on-100'])
      expect(result.stdout).toMatch(new RegExp(`^${name} +\\d+ req/s .* cpu \\d+ µs/req`, 'm'));
    expect(result.stdout).toMatch(/^cpu per request on\/off \d+(\.\d+)?, on-100\/off \d+(\.\d+)?$/m);
    const signed = JSON.parse(/^checkpoints signed: (.+)$/m.exec(result.stdout)?.[1] ?? '{}') as Record<
      string,
      number
    >;
    // Every 100 records signs more than every 1000; both sign at least the one at shutdown.
    expect(signed.on).toBeGreaterThanOrEqual(1);
    expect(signed['on-100']).toBeGreaterThan(signed.on ?? 0);
    const found = saved.results.find((r) => r.scenario === 'checkpoints');
    expect(Object.keys(found?.totals ?? {})).toEqual(['off', 'on', 'on-100']);
    for (const t of Object.values(found?.totals ?? {})) expect(t).toMatchObject({ non2xx: 0, errors: 0 });
  });

  it('bench/upstream-reading.mjs reads every body with each schema and prints four rounds', () => {
    const result = spawnSync(process.execPath, ['bench/upstream-reading.mjs', '--bodies', '50'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(result.status, result.stderr).toBe(0);
    const rounds = result.stdout.trim().split('\n');
    expect(rounds).toHaveLength(4);
    for (const round of rounds)
      for (const name of [
        'case, strict',
        'case, reading',
        'risk scores, strict',
        'risk scores, reading',
        'probation case, reading',
        'gateway risk scores, reading',
      ])
        expect(round).toMatch(new RegExp(`${name} \\d+\\.\\d{2} µs`));
  }, 70_000);
});
