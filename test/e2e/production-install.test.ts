import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_OPERATIONS, CASE_READS, casePath } from '../../src/domain/case-operations.js';
import { ROOT, serveEnv } from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';
import { registryNode } from '../support/registry-node.js';

/**
 * What the image's runtime stage copies from the checkout (its `COPY` lines without `--from`),
 * read from the Dockerfile so the two cannot drift: `serve` reads the subject access template
 * at start, say. (dist and node_modules come from the build stage: built here, installed here.)
 */
const IMAGE_FILES = (() => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  return [...runtime.matchAll(/^COPY (?!--)(\S+) /gm)].map((m) => m[1] as string);
})();

/**
 * What the container image runs (`Dockerfile`; containers cannot run on this machine): a
 * fresh copy of what the image copies, `npm ci --omit=dev --ignore-scripts` into it, then
 * the CLI and `serve` from that install alone. No devDependency is installed, so one that
 * the service imported at run time would fail here. better-sqlite3's Node-API binary comes
 * inside its package, so the install compiles nothing.
 *
 * Once on each supported Node line (decisions §16), each brought from the npm registry by
 * scripts/registry-node.sh: the install run by that Node's npm, the CLI and `serve` on it,
 * every case read over mutual TLS, and not one warning from npm, the runtime or a library
 * (Node 20 printed the AWS SDK's NodeVersionSupportWarning). The image's own line is 24.
 */
const LINES = ['22', '24', '26'] as const;
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
/** The NODE_OPTIONS the image's runtime stage sets: `serve` here runs with them too. */
const IMAGE_NODE_OPTIONS = /^\s+NODE_OPTIONS=(\S+)/m.exec(
  dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')),
)?.[1];

/** Lines of `output` that warn: npm's `npm warn`, Node's `(node:PID) …Warning`, any `…Warning:`. */
const warnings = (output: string) =>
  output.split('\n').filter((line) => /\bwarn\b|Warning\b|EBADENGINE/i.test(line));

describe.each(LINES)('the production install on Node %s (what the image runs)', (line) => {
  let app: string;
  let data: string;
  let nodeDir: string;
  let installOutput: string;
  const nodeBin = () => join(nodeDir, 'bin/node');
  const envFor = (extra: Record<string, string> = {}) => ({
    PATH: `${join(nodeDir, 'bin')}:${process.env.PATH ?? ''}`,
    ...extra,
  });
  const node = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(nodeBin(), [join(app, 'bin/case-read.js'), ...args], {
      cwd: app,
      env: envFor(env),
      encoding: 'utf8',
      timeout: 60_000,
    });

  beforeAll(() => {
    nodeDir = registryNode(line);
    app = mkdtempSync(join(tmpdir(), 'case-read-image-'));
    data = mkdtempSync(join(tmpdir(), 'case-read-image-data-'));
    for (const entry of ['package-lock.json', '.npmrc', 'dist', ...IMAGE_FILES]) {
      cpSync(join(ROOT, entry), join(app, entry), { recursive: true });
    }
    // npm itself runs on this line's node (first on PATH), as in an image built FROM it.
    const install = spawnSync(
      'npm',
      ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'],
      {
        cwd: app,
        env: { ...process.env, ...envFor({ npm_config_nodedir: nodeDir }) },
        encoding: 'utf8',
        timeout: 240_000,
      },
    );
    if (install.status !== 0) throw new Error(`npm ci --omit=dev failed:\n${install.stderr}`);
    installOutput = `${install.stdout}${install.stderr}`;
  }, 300_000);
  afterAll(() => {
    rmSync(app, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it('installs with no warning, production dependencies only', () => {
    expect(warnings(installOutput)).toEqual([]);
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

  it('runs the operator CLI and serves every case read, then drains on SIGTERM as PID 1 would; no warning', async () => {
    const pki = join(data, 'pki');
    // The same settings as every serve test, in production mode.
    const env = { ...serveEnv(data), NODE_ENV: 'production' };
    const run = (...args: string[]) => {
      const result = node(args, env);
      if (result.status !== 0) throw new Error(`case-read ${args.join(' ')}: ${result.stderr}`);
      expect(warnings(result.stderr), args.join(' ')).toEqual([]);
      return result.stdout;
    };
    run('pki', 'init', '--dir', pki);
    const client = JSON.parse(run('pki', 'client', 'client-a', '--dir', pki, '--json')) as {
      cert: string;
      key: string;
    };
    run('cases', 'import', join(app, 'fixtures/cases.json'));
    // Every case read, as the table lists them.
    run('clients', 'add', 'client-a', '--permissions', CASE_READS.join(','));
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
    // The API reference page, from swagger-ui-dist as the production install holds it.
    expect(run('openapi', '--html', join(data, 'api-reference.html'))).toMatch(/^API reference written to /);
    const apiKey = run('keys', 'issue', 'client-a').trim();
    const token = run('tokens', 'mint', '--client', 'client-a', '--dir', pki).trim();

    const { spawn } = await import('node:child_process');
    const child = spawn(nodeBin(), [join(app, 'bin/case-read.js'), 'serve'], {
      cwd: app,
      env: envFor({ ...env, NODE_OPTIONS: IMAGE_NODE_OPTIONS ?? '', PORT: '0', MANAGEMENT_PORT: '0' }),
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
      const listening = output.split('\n').find((l) => l.includes('"listening"'));
      expect(listening, output).toBeDefined();
      const { url, managementUrl, runtime } = JSON.parse(listening ?? '{}') as {
        url: string;
        managementUrl: string;
        runtime: string;
      };
      // The line it was meant to run on: its `"listening"` line names it.
      expect(runtime).toMatch(new RegExp(`^node ${line}\\.\\d+\\.\\d+$`));
      for (const path of CASE_OPERATIONS.map((row) => casePath(row, 'X123456'))) {
        const response = await httpsRequest(`${url}${path}`, {
          ca: readFileSync(join(pki, 'ca.pem'), 'utf8'),
          cert: readFileSync(client.cert, 'utf8'),
          key: readFileSync(client.key, 'utf8'),
          headers: { 'x-api-key': apiKey, authorization: `Bearer ${token}` },
        });
        expect(response.status, path).toBe(200);
        expect(response.headers['content-type'], path).toBe('application/json');
      }
      // The image's health check: the management listener's liveness.
      expect((await fetch(`${managementUrl}/health/live`)).status).toBe(200);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
      expect(output).toContain('shutdown: stopped');
      expect(warnings(output)).toEqual([]);
      // One record for each read.
      expect(run('audit', 'verify')).toMatch(
        new RegExp(`^audit chain intact: ${CASE_OPERATIONS.length} record\\(s\\)`),
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // Eight CLI processes and a server, one after another: under the full suite's load on two
    // cores this took over 20 s once (5 s alone).
  }, 90_000);
});

/**
 * Node 20 (ended 2026-04-30), the machine's own node where this project is built, brought from
 * the npm registry like the others: `npm ci` stops at once (engine-strict, .npmrc), and where
 * someone installs anyway, `case-read` and `npm start` each refuse in one line before the
 * native module that crashed it (better-sqlite3 13: a segmentation fault) is loaded.
 */
describe('an end-of-life Node (20, from the registry)', () => {
  let app: string;
  let nodeDir: string;
  const envFor = () => ({
    PATH: `${join(nodeDir, 'bin')}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '',
  });
  const floor = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
  ).engines.node;
  const refusal = (who: string) =>
    `${who}: needs Node.js ${floor.slice(2)} or later (24 LTS recommended); this is Node.js 20.20.2; run eval "$(scripts/registry-node.sh --env)" to bring it\n`;

  beforeAll(() => {
    nodeDir = registryNode('20');
    app = mkdtempSync(join(tmpdir(), 'case-read-node20-'));
    for (const entry of [
      'package.json',
      'package-lock.json',
      '.npmrc',
      'bin',
      'dist',
      'fixtures',
      'scripts',
    ]) {
      cpSync(join(ROOT, entry), join(app, entry), { recursive: true });
    }
  });
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('stops npm ci at once, naming the Node needed, with nothing installed', () => {
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: app,
      env: { ...process.env, ...envFor(), npm_config_nodedir: nodeDir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(install.signal).toBeNull();
    expect(install.status).not.toBe(0);
    expect(install.stderr).toContain('EBADENGINE');
    expect(install.stderr).toContain(`Required: {"node":"${floor}"}`);
    expect(existsSync(join(app, 'node_modules'))).toBe(false);
  });

  it('refuses case-read and npm start in one line each, exit 1, no signal, on an install forced past it', () => {
    const install = spawnSync(
      'npm',
      [
        'ci',
        '--omit=dev',
        '--ignore-scripts',
        '--engine-strict=false',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
      ],
      {
        cwd: app,
        env: { ...process.env, ...envFor(), npm_config_nodedir: nodeDir },
        encoding: 'utf8',
        timeout: 240_000,
      },
    );
    if (install.status !== 0) throw new Error(`npm ci --engine-strict=false failed:\n${install.stderr}`);
    // What it would have crashed on: better-sqlite3 loads, and fails, on this Node.
    expect(existsSync(join(app, 'node_modules/better-sqlite3'))).toBe(true);

    const cli = spawnSync(join(nodeDir, 'bin/node'), [join(app, 'bin/case-read.js'), 'help'], {
      cwd: app,
      env: envFor(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: cli.status, signal: cli.signal, stdout: cli.stdout, stderr: cli.stderr }).toEqual({
      status: 1,
      signal: null,
      stdout: '',
      stderr: refusal('case-read'),
    });

    const start = spawnSync('npm', ['start', '--silent'], {
      cwd: app,
      env: envFor(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: start.status, signal: start.signal, stderr: start.stderr }).toEqual({
      status: 1,
      signal: null,
      stderr: refusal('npm start'),
    });
    // Nothing was made: the refusal came before .dev/.
    expect(existsSync(join(app, '.dev'))).toBe(false);
  }, 300_000);
});

describe('the container recipe', () => {
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

  it('runs Node 24 LTS with the young generation held to 2 x 16 MiB (docs/performance.md)', () => {
    expect(dockerfile.match(/^FROM \S+/gm)).toEqual([
      'FROM node:24-bookworm-slim',
      'FROM node:24-bookworm-slim',
    ]);
    expect(IMAGE_NODE_OPTIONS).toBe('--max-semi-space-size=16');
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
