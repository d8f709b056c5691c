import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, serveEnv } from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';

/**
 * What the container image runs (`Dockerfile`; containers cannot run on this machine): a
 * fresh copy of what the image copies, `npm ci --omit=dev --ignore-scripts` into it, then
 * the CLI and `serve` from that install alone. No devDependency is installed, so one that
 * the service imported at run time would fail here. The one native module is the build
 * this machine already made (the image runs `npm rebuild better-sqlite3` instead: a compile
 * of a minute that proves nothing more here).
 */

let app: string;
let data: string;

const node = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [join(app, 'bin/case-read.js'), ...args], {
    cwd: app,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'case-read-image-'));
  data = mkdtempSync(join(tmpdir(), 'case-read-image-data-'));
  for (const entry of ['package.json', 'package-lock.json', 'bin', 'dist', 'fixtures']) {
    cpSync(join(ROOT, entry), join(app, entry), { recursive: true });
  }
  const install = spawnSync(
    'npm',
    ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'],
    {
      cwd: app,
      encoding: 'utf8',
      timeout: 240_000,
    },
  );
  if (install.status !== 0) throw new Error(`npm ci --omit=dev failed:\n${install.stderr}`);
  cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), join(app, 'node_modules/better-sqlite3/build'), {
    recursive: true,
  });
}, 300_000);
afterAll(() => {
  rmSync(app, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
});

describe('the production install (what the image runs)', () => {
  it('holds production dependencies only', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    // What the installed production packages themselves depend on (a development tool of
    // ours may also be one of theirs: yaml, under @hono/zod-openapi).
    const modules = join(app, 'node_modules');
    const packages = readdirSync(modules).flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => `${name}/${sub}`) : [name],
    );
    const neededByProduction = new Set(
      packages.flatMap((name) => {
        const manifest = join(modules, name, 'package.json');
        if (!existsSync(manifest)) return [];
        const { dependencies = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
          dependencies?: Record<string, string>;
        };
        return Object.keys(dependencies);
      }),
    );
    for (const dev of Object.keys(pkg.devDependencies)) {
      if (neededByProduction.has(dev)) continue;
      expect(existsSync(join(modules, dev)), dev).toBe(false);
    }
    expect(neededByProduction.has('vitest')).toBe(false);
    expect(existsSync(join(app, 'node_modules/hono'))).toBe(true);
  });

  it('runs the operator CLI and serves a case, then drains on SIGTERM as PID 1 would', async () => {
    const pki = join(data, 'pki');
    // The same settings as every serve test, in production mode.
    const env = { ...serveEnv(data), NODE_ENV: 'production' };
    const run = (...args: string[]) => {
      const result = node(args, env);
      if (result.status !== 0) throw new Error(`case-read ${args.join(' ')}: ${result.stderr}`);
      return result.stdout;
    };
    run('pki', 'init', '--dir', pki);
    const client = JSON.parse(run('pki', 'client', 'client-a', '--dir', pki, '--json')) as {
      cert: string;
      key: string;
    };
    run('cases', 'import', join(app, 'fixtures/cases.json'));
    run('clients', 'add', 'client-a', '--permissions', 'getCase');
    // The upgrade step, as the migration Job runs it: the store variables and nothing else.
    const stores = {
      CASE_STORE: env.CASE_STORE,
      ACCESS_STORE: env.ACCESS_STORE,
      AUDIT_STORE: env.AUDIT_STORE,
    };
    const migrated = node(['stores', 'migrate'], stores);
    expect(migrated.stderr).toBe('');
    expect(migrated.stdout).toMatch(/^case store sqlite:.*: version \d+, current \(nothing to do\)$/m);
    expect(migrated.stdout).toMatch(/^audit store sqlite:.*: absent, not created/m);
    const apiKey = run('keys', 'issue', 'client-a').trim();
    const token = run('tokens', 'mint', '--client', 'client-a', '--dir', pki).trim();

    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [join(app, 'bin/case-read.js'), 'serve'], {
      cwd: app,
      env: { PATH: process.env.PATH ?? '', ...env, PORT: '0', MANAGEMENT_PORT: '0' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      for (let i = 0; i < 100 && !output.includes('"listening"'); i++)
        await new Promise((r) => setTimeout(r, 100));
      const line = output.split('\n').find((l) => l.includes('"listening"'));
      expect(line, output).toBeDefined();
      const { url, managementUrl } = JSON.parse(line ?? '{}') as { url: string; managementUrl: string };
      const response = await httpsRequest(`${url}/case/X123456`, {
        ca: readFileSync(join(pki, 'ca.pem'), 'utf8'),
        cert: readFileSync(client.cert, 'utf8'),
        key: readFileSync(client.key, 'utf8'),
        headers: { 'x-api-key': apiKey, authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200);
      // The image's health check: the management listener's liveness.
      expect((await fetch(`${managementUrl}/health/live`)).status).toBe(200);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(output).toContain('shutdown: stopped');
      expect(run('audit', 'verify')).toMatch(/^audit chain intact: 1 record\(s\)/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // Eight CLI processes and a server, one after another: under the full suite's load on two
    // cores this took over 20 s once (5 s alone).
  }, 90_000);
});

describe('the container recipe', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const kubernetes = readFileSync(join(ROOT, 'deploy/kubernetes/case-read-service.yaml'), 'utf8');

  it('runs as a non-root user, production dependencies only, serve as PID 1 in exec form, with a health check', () => {
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtimeStage).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(runtimeStage).not.toMatch(/npm (ci|install)/);
    expect(runtimeStage).toMatch(/^ENTRYPOINT \["node", "bin\/case-read.js"\]$/m);
    expect(runtimeStage).toMatch(/^CMD \["serve"\]$/m);
    expect(runtimeStage).toMatch(/^HEALTHCHECK .*\n?.*health\/live/m);
  });

  it('gives Kubernetes a grace period above the drain, probes on the management port, a read-only root', () => {
    const number = (name: string) => Number(new RegExp(`${name}, value: "(\\d+)"`).exec(kubernetes)?.[1]);
    const grace = Number(/terminationGracePeriodSeconds: (\d+)/.exec(kubernetes)?.[1]);
    expect(grace * 1000).toBeGreaterThan(number('SHUTDOWN_DELAY_MS') + number('SHUTDOWN_GRACE_MS'));
    expect(kubernetes).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/health\/ready, port: management \}/);
    expect(kubernetes).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/health\/live, port: management \}/);
    expect(kubernetes).toContain('readOnlyRootFilesystem: true');
    expect(kubernetes).toContain('runAsNonRoot: true');
    expect(kubernetes).not.toMatch(/^\s*subPath:/m);
  });

  it('migrates the stores in a Job of its own that reads only the store variables', () => {
    const job = readFileSync(join(ROOT, 'deploy/kubernetes/migrate-job.yaml'), 'utf8');
    expect(job).toMatch(/^kind: Job$/m);
    expect(job).toContain('args: ["stores", "migrate"]');
    expect(job).toContain('restartPolicy: Never');
    expect(job).toContain('readOnlyRootFilesystem: true');
    expect([...job.matchAll(/- name: (\w+)$/gm)].map((m) => m[1])).toEqual([
      'migrate',
      'CASE_STORE',
      'ACCESS_STORE',
      'AUDIT_STORE',
    ]);
  });
});
