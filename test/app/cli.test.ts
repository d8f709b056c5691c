import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, startServe } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fixtures = join(ROOT, 'fixtures/cases.json');
const fixtureFile = JSON.parse(readFileSync(fixtures, 'utf8')) as {
  cases: { crn: string; covers?: string }[];
};

describe('case-read usage errors exit 2 with a usage line', () => {
  it.each([
    [[], 'a command is needed'],
    [['frobnicate'], 'unknown command: frobnicate'],
    [['cases'], 'cases needs a subcommand'],
    [['cases', 'import'], 'cases import needs at least one FILE'],
    [['cases', 'import', 'x.json', '--bogus'], "Unknown option '--bogus'"],
    [['cases', 'generate'], 'cases generate needs --count N'],
    [['cases', 'generate', '--count', 'ten'], '--count must be a whole number'],
    [['cases', 'generate', '--count', '0'], '--count must be a whole number'],
    [['cases', 'generate', '--count', '5', '--seed=-1'], '--seed must be a whole number'],
    [['cases', 'generate', '--count', '5', '--seed', '1.5'], '--seed must be a whole number'],
    [
      ['cases', 'generate', '--count', '5', '--store', 'memory'],
      '--store: cases can only be written to a sqlite:PATH store',
    ],
    [
      ['cases', 'generate', '--count', '5', '--store', 'redis://x'],
      '--store: expected memory or sqlite:PATH',
    ],
    [['serve', 'extra'], 'serve takes no arguments'],
  ])('%j', (args, message) => {
    const result = runCli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(`case-read: ${message}`);
    expect(result.stderr).toContain('usage:');
    expect(result.stdout).toBe('');
  });

  it('help prints the usage and exits 0', () => {
    const result = runCli(['help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('case-read cases generate --count N');
  });
});

describe('case-read cases import', () => {
  it('imports the fixtures and reports the count; a re-import replaces, it does not duplicate', () => {
    const store = `sqlite:${join(dir, 'import.db')}`;
    const first = runCli(['cases', 'import', fixtures, '--store', store]);
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe(
      `imported ${fixtureFile.cases.length} case(s) into ${store} (${fixtureFile.cases.length} held)`,
    );
    const again = runCli(['cases', 'import', fixtures, '--store', store, '--json']);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      imported: fixtureFile.cases.length,
      total: fixtureFile.cases.length,
      store,
    });
  });

  it('takes the store from CASE_STORE when --store is absent', () => {
    const path = join(dir, 'from-env.db');
    const result = runCli(['cases', 'import', fixtures], { CASE_STORE: `sqlite:${path}` });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`sqlite:${path}`);
  });

  it('writes nothing when any file is bad, and says which file and field', () => {
    const path = join(dir, 'atomic.db');
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ cases: [fixtureFile.cases[0]] }));
    const bad = join(dir, 'bad.json');
    const badCase = structuredClone(fixtureFile.cases[1]) as Record<string, unknown>;
    delete badCase.homeOfficeInterest;
    writeFileSync(bad, JSON.stringify({ cases: [badCase] }));
    const result = runCli(['cases', 'import', good, bad, '--store', `sqlite:${path}`]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(bad);
    expect(result.stderr).toContain('cases[0].homeOfficeInterest');
    expect(() => new Database(path, { fileMustExist: true })).toThrow();
  });

  it('refuses the same crn in two files', () => {
    const result = runCli([
      'cases',
      'import',
      fixtures,
      fixtures,
      '--store',
      `sqlite:${join(dir, 'dupe.db')}`,
    ]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/crn X123456 is also in/);
  });
});

describe('case-read cases generate', () => {
  it('is deterministic for a seed', () => {
    const dump = (file: string) => {
      const db = new Database(file, { readonly: true });
      const rows = db.prepare('SELECT * FROM cases ORDER BY crn').all();
      const managers = db.prepare('SELECT * FROM community_managers ORDER BY crn').all();
      db.close();
      return { rows, managers };
    };
    const a = join(dir, 'gen-a.db');
    const b = join(dir, 'gen-b.db');
    const ra = runCli([
      'cases',
      'generate',
      '--count',
      '1500',
      '--seed',
      '42',
      '--store',
      `sqlite:${a}`,
      '--json',
    ]);
    const rb = runCli(['cases', 'generate', '--count', '1500', '--seed', '42', '--store', `sqlite:${b}`]);
    expect(ra.status).toBe(0);
    expect(rb.status).toBe(0);
    expect(JSON.parse(ra.stdout)).toMatchObject({ generated: 1500, seed: 42, store: `sqlite:${a}` });
    expect(rb.stdout).toMatch(/^generated 1500 case\(s\) with seed 42 into sqlite:.+ in \d+\.\d s\n$/);
    const da = dump(a);
    expect(da.rows).toHaveLength(1500);
    expect(da).toStrictEqual(dump(b));
  });
});

describe('case-read serve', () => {
  it('answers the three endpoints for X123456 exactly as the fixture says, then stops on SIGTERM', async () => {
    const path = join(dir, 'serve.db');
    expect(runCli(['cases', 'import', fixtures, '--store', `sqlite:${path}`]).status).toBe(0);
    const { url, child } = await startServe({ CASE_STORE: `sqlite:${path}`, LOG_LEVEL: 'info' });
    try {
      const x = fixtureFile.cases.find((c) => c.crn === 'X123456') as Record<string, unknown>;
      expect(await (await fetch(`${url}/case/X123456`)).json()).toStrictEqual(x.personalDetails);
      expect(await (await fetch(`${url}/case/X123456/home-office-interest`)).json()).toStrictEqual(
        x.homeOfficeInterest,
      );
      expect(await (await fetch(`${url}/case/X123456/community-manager`)).json()).toStrictEqual({
        crn: 'X123456',
        communityManager: x.communityManager,
      });
      const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string };
      expect(doc.openapi).toMatch(/^3\.1/);
      const docs = await fetch(`${url}/docs/swagger-ui-bundle.js`);
      expect(docs.status).toBe(200);
      expect((await docs.text()).length).toBeGreaterThan(100_000);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it('refuses to start on bad configuration, naming the variable', () => {
    const result = runCli(['serve'], { PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT: PORT must be a port number');
    expect(result.stderr).toContain('LOG_LEVEL: expected one of');
  });

  it('refuses to start on a missing store, saying how to create it', () => {
    const result = runCli(['serve'], { CASE_STORE: `sqlite:${join(dir, 'absent.db')}` });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('case-read cases import fixtures/cases.json');
  });

  it('serves the bundled fixtures with CASE_STORE=memory', async () => {
    const { url, child } = await startServe({ CASE_STORE: 'memory' });
    try {
      expect((await fetch(`${url}/case/A000002/community-manager`)).status).toBe(404);
      expect((await fetch(`${url}/case/A000001`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    await once(child, 'exit');
  });
});
