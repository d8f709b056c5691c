import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_VARIABLES } from '../../src/app/composition/config.js';
import { STORE_REGISTRY } from '../../src/app/composition/store-kinds.js';
import { PERMISSIONS } from '../../src/domain/access/permissions.js';
import { CASE_OPERATIONS, CASE_READS, type CaseRead, casePath } from '../../src/domain/case-operations.js';
import {
  BIN,
  type CliResult,
  cliInProcess,
  ROOT,
  runCli,
  runCliInProcess,
  serveEnv,
  startServe,
} from '../support/cli.js';
import { httpsRequest } from '../support/https-client.js';
import { CURRENT } from '../support/runtimes.js';
import { execOn, openSqlite } from '../support/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'case-read-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fixtures = join(ROOT, 'fixtures/cases.json');
const fixtureFile = JSON.parse(readFileSync(fixtures, 'utf8')) as {
  cases: { crn: string; covers?: string }[];
};

/** Each usage error and the message it gives: every command's argument checks. */
/** The forms of the stores cases are written to, as the registry says them (so a new store kind changes no test here). */
const CASE_WRITER_FORMS = STORE_REGISTRY.caseWriterForms();

const USAGE_ERRORS: [string[], string][] = [
  [[], 'Usage: case-read [options] [command]'],
  [['frobnicate'], "unknown command 'frobnicate'"],
  [['cases'], 'Usage: case-read cases [options] [command]'],
  [['cases', 'import'], "missing required argument 'FILE'"],
  [['cases', 'import', 'x.json', '--bogus'], "unknown option '--bogus'"],
  [['cases', 'generate'], "required option '--count <N>' not specified"],
  [['cases', 'generate', '--count', 'ten'], '--count must be a whole number'],
  [['cases', 'generate', '--count', '0'], '--count must be a whole number'],
  [['cases', 'generate', '--count', '5', '--seed=-1'], '--seed must be a whole number'],
  [['cases', 'generate', '--count', '5', '--seed', '1.5'], '--seed must be a whole number'],
  [
    ['cases', 'import', 'x.json', '--store', 'https://records.example'],
    `--store: cases cannot be written to upstream; use ${CASE_WRITER_FORMS}`,
  ],
  [
    ['cases', 'generate', '--count', '5', '--store', 'memory'],
    `--store: cases cannot be written to memory; use ${CASE_WRITER_FORMS}`,
  ],
  [
    ['cases', 'generate', '--count', '5', '--store', 'redis://x'],
    `--store: redis cannot hold a case store; expected ${STORE_REGISTRY.formsFor('cases')}`,
  ],
  [['serve', 'extra'], "too many arguments for 'serve'. Expected 0 arguments but got 1: extra."],
  [['pki'], 'Usage: case-read pki [options] [command]'],
  [['pki', 'init'], "required option '--dir <DIR>' not specified"],
  [['pki', 'client', 'client-a'], "required option '--dir <DIR>' not specified"],
  [['pki', 'client', 'bad cn!', '--dir', '/tmp/x'], 'CN must be 1-64 characters'],
  [['pki', 'client', 'c', '--dir', '/tmp/x', '--days', '0'], '--days must be a whole number'],
  [['clients', 'add', 'client-a'], "required option '--permissions <P[,P...]>' not specified"],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase,deleteCase'],
    '--permissions: unknown permission "deleteCase"',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--queue-arn', 'my-queue'],
    '--queue-arn must be an SQS queue ARN',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--redact', 'preferredLanguage,emailAddress'],
    '--redact: unknown field to redact "emailAddress"; expected none, or one or more of preferredLanguage, personalCircumstances, disabilities, offenderPersonalityDisorder, homeOfficeInterest.notes, communityManager.jobRole, communityManager.emailAddress, communityManager.officeName, communityManager.teamPhoneNumber, communityManager.name.middleName',
  ],
  [
    ['clients', 'update', 'client-a'],
    'clients update needs one or more of --permissions, --queue-arn, --role-arn, --rate-limit, --obo, --obo-issuer, --obo-jwks, --obo-audience, --obo-email-claim, --redact, --limited-access',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--limited-access', 'yes'],
    '--limited-access: unknown limited-access mode "yes"; expected one of deny, allow',
  ],
  [
    ['clients', 'update', 'client-a', '--limited-access', 'Allow'],
    '--limited-access: unknown limited-access mode "Allow"',
  ],
  [['clients', 'update', 'client-a', '--redact', 'crn'], '--redact: unknown field to redact "crn"'],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--role-arn', 'arn:aws:iam::1:user/x'],
    '--role-arn must be an IAM role ARN',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--rate-limit', 'fast'],
    '--rate-limit: rate limit must look like N/DURATION',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--obo', 'sometimes'],
    '--obo must be forbidden, optional or required',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--obo', 'required'],
    '--obo required needs --obo-issuer, --obo-jwks, --obo-audience',
  ],
  [
    ['clients', 'add', 'client-a', '--permissions', 'getCase', '--obo-issuer', 'x'],
    '--obo-issuer, --obo-jwks, --obo-audience and --obo-email-claim need --obo optional or required',
  ],
  [['clients', 'show'], "missing required argument 'CN'"],
  [['clients', 'frobnicate'], "unknown command 'frobnicate'"],
  [['keys', 'issue', 'client-a', '--expires-in', 'forever'], '--expires-in must look like 30s'],
  [['keys', 'revoke'], "missing required argument 'KEY_ID'"],
  [['certs', 'revoke', 'not-hex'], 'a certificate serial is hexadecimal'],
  [['grants', 'add', 'not-an-email', 'getCase'], 'EMAIL must be an e-mail address'],
  [['grants', 'add', 'a@b.example'], "missing required argument 'P[,P...]'"],
  [['tokens', 'mint'], "required option '--client <CN>' not specified"],
  [['tokens', 'mint', '--client', 'c', '--expires-in', '1y'], '--expires-in must look like 30s'],
  [['config', 'frob'], "unknown command 'frob'"],
  [['audit'], 'Usage: case-read audit [options] [command]'],
  [['audit', 'keygen'], "required option '--dir <DIR>' not specified"],
  [
    ['audit', 'verify', '--checkpoints', 'log.jsonl'],
    '--checkpoints needs --public-key: a checkpoint counts only once its signature is checked',
  ],
  [['audit', 'query', '--since', 'yesterday'], '--since must be an ISO 8601 date-time'],
  [
    ['audit', 'verify', '--audit-store', 'redis://127.0.0.1:6379'],
    `--audit-store: redis cannot hold an audit store; expected ${STORE_REGISTRY.formsFor('audit')}`,
  ],
  [['clients', 'list', '--access-store', 'postgres://x'], '--access-store: postgres:// needs a database'],
];

/**
 * The usage errors run through the built binary, for the status a shell sees: one from the
 * dispatcher, one from the argument parser, one from each of two command modules loaded on
 * demand, and `serve`'s (which never runs in this process). The binary runs every other
 * module in the tests below. The rest run in this process: the same `main`, its status and
 * its lines, without a process each.
 */
const THROUGH_THE_BINARY = new Set(
  [[], ['cases', 'import', 'x.json', '--bogus'], ['pki', 'init'], ['tokens', 'mint'], ['serve', 'extra']].map(
    (args) => JSON.stringify(args),
  ),
);

describe('case-read usage errors exit 2, naming what was wrong and pointing to the help', () => {
  const expectUsageError = (result: CliResult, message: string) => {
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    if (message.startsWith('Usage: ')) {
      // A group given no command: its help, with its commands, on stderr.
      expect(result.stderr.startsWith(message)).toBe(true);
      expect(result.stderr).toContain('Commands:');
      return;
    }
    expect(result.stderr).toContain(`case-read: ${message}`);
    // A few lines: what was wrong (and the option meant, when one is near), then where the help is.
    expect(result.stderr.trimEnd().split('\n').length).toBeLessThanOrEqual(3);
    expect(result.stderr.trimEnd()).toMatch(
      /\nRun 'case-read [a-z -]*--help' for (its usage|the commands)\.$/,
    );
  };

  it.each(USAGE_ERRORS.filter(([args]) => args[0] !== 'serve'))('%j', async (args, message) => {
    expectUsageError(await runCliInProcess(args), message);
  });

  it.each(USAGE_ERRORS.filter(([args]) => THROUGH_THE_BINARY.has(JSON.stringify(args))))(
    '%j, run by the binary',
    (args, message) => {
      expectUsageError(runCli(args), message);
    },
  );

  it("help lists the commands and exits 0; a command's help names its store forms and the permissions", () => {
    const result = runCli(['help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^ {2}cases generate \[options\] +write N synthetic cases/m);
    // Every permission a client can be given, renewCertificate included (the domain's list).
    const clientsAdd = runCli(['clients', 'add', '--help']).stdout.replace(/\s+/g, ' ');
    expect(clientsAdd).toContain(PERMISSIONS.join(', '));
    expect(result.stdout).toContain('Configuration: docs/operations/configuration.md');
  });

  it.each([
    [
      ['audit', 'verify'],
      `the audit trail: ${STORE_REGISTRY.formsFor('audit')} (else AUDIT_STORE, else ${STORE_VARIABLES.AUDIT_STORE.fallback})`,
    ],
    [['cases', 'import'], `${CASE_WRITER_FORMS} (else CASE_STORE`],
  ])('%j --help names its store forms from the registry', async (command, forms) => {
    const help = (await runCliInProcess([...command, '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain(forms);
    if (command[0] === 'cases') {
      // None of the kinds cases cannot be written to is offered.
      const offered = /the store to write to: ([^(]*)/.exec(help)?.[1] ?? '';
      const notWriters = STORE_REGISTRY.kinds.filter((k) => k.cases?.openWriter === undefined);
      expect(notWriters.length).toBeGreaterThan(0);
      for (const kind of notWriters) expect(offered).not.toContain(kind.form);
    }
  });
});

describe('case-read cases import', () => {
  it('imports the fixtures and reports the count; a re-import replaces, it does not duplicate', async () => {
    const store = `sqlite:${join(dir, 'import.db')}`;
    const first = await runCliInProcess(['cases', 'import', fixtures, '--store', store]);
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe(
      `imported ${fixtureFile.cases.length} case(s) into ${store} (${fixtureFile.cases.length} held)`,
    );
    const again = await runCliInProcess(['cases', 'import', fixtures, '--store', store, '--json']);
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      imported: fixtureFile.cases.length,
      total: fixtureFile.cases.length,
      store,
    });
  });

  it('takes the store from CASE_STORE when --store is absent', () => {
    const path = join(dir, 'from-env.db');
    // Through the binary: the variable from the process's own environment.
    const result = runCli(['cases', 'import', fixtures], { CASE_STORE: `sqlite:${path}` });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`sqlite:${path}`);
  });

  it('writes nothing when any file is bad, and says which file and field', async () => {
    const path = join(dir, 'atomic.db');
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ cases: [fixtureFile.cases[0]] }));
    const bad = join(dir, 'bad.json');
    const badCase = structuredClone(fixtureFile.cases[1]) as Record<string, unknown>;
    delete badCase.homeOfficeInterest;
    writeFileSync(bad, JSON.stringify({ cases: [badCase] }));
    const result = await runCliInProcess(['cases', 'import', good, bad, '--store', `sqlite:${path}`]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(bad);
    expect(result.stderr).toContain('cases[0].homeOfficeInterest');
    expect(() => openSqlite(path, { readonly: true })).toThrow();
  });

  it('refuses the same crn in two files', async () => {
    const result = await runCliInProcess([
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

  it('refuses a directory or a FIFO given as a case file at once, naming it and what it is, and writes nothing', async () => {
    const path = join(dir, 'not-files.db');
    const folder = join(dir, 'cases-folder.json');
    mkdirSync(folder);
    const folderResult = await runCliInProcess([
      'cases',
      'import',
      fixtures,
      folder,
      '--store',
      `sqlite:${path}`,
    ]);
    expect(folderResult.status).toBe(1);
    expect(folderResult.stderr).toBe(`case-read: ${folder} is not a regular file (a directory)\n`);
    // A FIFO with no writer, in a process of its own: should the import wait on it, the
    // timeout ends it and the test fails rather than hangs.
    const fifo = join(dir, 'cases.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const fifoResult = spawnSync(
      CURRENT.command,
      [...CURRENT.args, BIN, 'cases', 'import', fifo, '--store', `sqlite:${path}`],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 20_000 },
    );
    expect(fifoResult.signal).toBeNull();
    expect(fifoResult.status).toBe(1);
    expect(fifoResult.stderr).toBe(`case-read: ${fifo} is not a regular file (a FIFO)\n`);
    expect(() => openSqlite(path, { readonly: true })).toThrow();
  });
});

describe('case-read cases generate', () => {
  it('is deterministic for a seed', async () => {
    const dump = (file: string) => {
      const db = openSqlite(file, { readonly: true });
      const rows = db.prepare('SELECT * FROM cases ORDER BY crn').all();
      const managers = db.prepare('SELECT * FROM community_managers ORDER BY crn').all();
      db.close();
      return { rows, managers };
    };
    const a = join(dir, 'gen-a.db');
    const b = join(dir, 'gen-b.db');
    const generate = (file: string, ...extra: string[]) =>
      runCliInProcess([
        'cases',
        'generate',
        '--count',
        '1500',
        '--seed',
        '42',
        '--store',
        `sqlite:${file}`,
        ...extra,
      ]);
    const ra = await generate(a, '--json');
    const rb = await generate(b);
    expect(ra.status).toBe(0);
    expect(rb.status).toBe(0);
    expect(JSON.parse(ra.stdout)).toMatchObject({ generated: 1500, seed: 42, store: `sqlite:${a}` });
    expect(rb.stdout).toMatch(/^generated 1500 case\(s\) with seed 42 into sqlite:.+ in \d+\.\d s\n$/);
    const da = dump(a);
    expect(da.rows).toHaveLength(1500);
    expect(da).toStrictEqual(dump(b));
    // One case in 50 is limited access (the 50th, 100th, …), cycling through the rule kinds.
    const limited = (da.rows as { crn: string; limited_access: string | null }[]).filter(
      (r) => r.limited_access !== null,
    );
    expect(limited.map((r) => r.crn).slice(0, 3)).toEqual(['A000049', 'A000099', 'A000149']);
    expect(limited).toHaveLength(30);
  });
});

describe('case-read cases access', () => {
  const store = () => `sqlite:${join(dir, 'access.db')}`;
  beforeAll(async () => {
    const file = join(dir, 'limited.json');
    const limitedCase = {
      ...structuredClone(fixtureFile.cases[0]),
      crn: 'L000001',
      limitedAccess: {
        exclusions: [
          { user: 'officer.a@probation.example', until: null },
          { user: 'officer.x@probation.example', until: '2020-01-01T00:00:00Z' },
        ],
        exclusionMessage: 'You are excluded from viewing this case.',
        restriction: { users: ['officer.b@probation.example'], until: '2099-01-01T00:00:00Z' },
        restrictionMessage: null,
      },
    };
    delete (limitedCase as { covers?: string }).covers;
    writeFileSync(file, JSON.stringify({ cases: [limitedCase, fixtureFile.cases[1]] }));
    expect((await runCliInProcess(['cases', 'import', file, '--store', store()])).status).toBe(0);
  });

  it("shows a case's rules, each marked active or ended; JSON as held", async () => {
    const shown = await runCliInProcess(['cases', 'access', 'L000001', '--store', store()]);
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain('officer.a@probation.example  active, no end');
    expect(shown.stdout).toContain('officer.x@probation.example  ended 2020-01-01T00:00:00Z');
    expect(shown.stdout).toContain('only 1 named user(s), active until 2099-01-01T00:00:00Z');
    expect(shown.stdout).toContain('message       (generic)');
    const json = JSON.parse(
      (await runCliInProcess(['cases', 'access', 'L000001', '--store', store(), '--json'])).stdout,
    );
    expect(json.limitedAccess.restriction).toEqual({
      users: ['officer.b@probation.example'],
      until: '2099-01-01T00:00:00Z',
    });
    const open = await runCliInProcess([
      'cases',
      'access',
      (fixtureFile.cases[1] as { crn: string }).crn,
      '--store',
      store(),
    ]);
    expect(open.stdout).toContain('no limited-access rules');
  });

  it('an unknown crn fails (1); a bad crn, a missing CRN or an upstream store is a usage error (2)', async () => {
    const missing = await runCliInProcess(['cases', 'access', 'Q999999', '--store', store()]);
    expect([missing.status, missing.stderr]).toEqual([1, expect.stringContaining('no case Q999999')]);
    expect((await runCliInProcess(['cases', 'access', 'not a crn', '--store', store()])).status).toBe(2);
    expect((await runCliInProcess(['cases', 'access', '--store', store()])).stderr).toContain(
      "missing required argument 'CRN'",
    );
    const upstream = await runCliInProcess([
      'cases',
      'access',
      'X123456',
      '--store',
      'https://records.example',
    ]);
    expect(upstream.status).toBe(2);
    expect(upstream.stderr).toContain('decides limited access itself');
  });

  it('an import with a malformed rule is refused, naming the field', async () => {
    const file = join(dir, 'bad-rule.json');
    const bad = structuredClone(fixtureFile.cases[2]) as Record<string, unknown>;
    delete bad.covers;
    bad.limitedAccess = {
      exclusions: [{ user: 'not an e-mail', until: 'tomorrow' }],
      exclusionMessage: null,
      restriction: null,
      restrictionMessage: null,
    };
    writeFileSync(file, JSON.stringify({ cases: [bad] }));
    const result = await runCliInProcess([
      'cases',
      'import',
      file,
      '--store',
      `sqlite:${join(dir, 'bad-rule.db')}`,
    ]);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('cases[0].limitedAccess.exclusions[0].user: must be an e-mail address');
    expect(result.stderr).toContain('cases[0].limitedAccess.exclusions[0].until');
  });
});

describe('onboarding end to end, with the CLI alone', () => {
  const base = join(dir, 'onboarding');
  const pkiDir = join(base, 'pki');
  const env = serveEnv(base);
  const access = env.ACCESS_STORE;
  const casesStore = env.CASE_STORE;
  const cli = cliInProcess(env);
  const x = fixtureFile.cases.find((c) => c.crn === 'X123456') as Record<string, unknown>;
  /**
   * What each case read answers for X123456, from the fixture: the risk scores newest first,
   * one page of the default 10. A row added to the table without its answer here does not compile.
   */
  const riskScores = [...(x.riskScores as { completedDate: string }[])].sort(
    (p, q) => Date.parse(q.completedDate) - Date.parse(p.completedDate),
  );
  const answerOf: { readonly [K in CaseRead]: unknown } = {
    getCase: x.personalDetails,
    getHomeOfficeInterest: x.homeOfficeInterest,
    getCommunityManagerByCrn: { crn: 'X123456', communityManager: x.communityManager },
    getRiskScores: {
      data: riskScores,
      pagination: {
        isLastPage: true,
        count: riskScores.length,
        page: 1,
        perPage: 10,
        totalCount: riskScores.length,
        totalPages: 1,
      },
    },
  };
  /** `serve` through the binary (it runs only as a process); any other command in this process. */
  const runCommand = async (args: string[], commandEnv: Record<string, string>): Promise<CliResult> =>
    args[0] === 'serve' ? runCli(args, commandEnv) : runCliInProcess(args, commandEnv);

  it('pki, clients, keys, tokens and serve: a first client reads, a second is onboarded, used, revoked', async () => {
    expect(await cli('pki', 'init', '--dir', pkiDir)).toContain('development PKI created');
    expect((await runCliInProcess(['pki', 'init', '--dir', pkiDir], env)).status).toBe(1);
    const first = JSON.parse(await cli('pki', 'client', 'client-a', '--dir', pkiDir, '--json')) as {
      serialNumber: string;
      cert: string;
      key: string;
    };
    expect(first.serialNumber).toMatch(/^[0-9A-F]+$/);
    await cli('cases', 'import', fixtures, '--store', casesStore);
    // Every case read, as the table lists them.
    await cli('clients', 'add', 'client-a', '--permissions', CASE_READS.join(','));
    expect(
      (await runCliInProcess(['clients', 'add', 'client-a', '--permissions', 'getCase'], env)).stderr,
    ).toContain('client client-a already exists');
    const keyA = (await cli('keys', 'issue', 'client-a')).trim();
    expect(keyA).toMatch(/^crs_[a-z0-9]{16}_[A-Za-z0-9_-]{43}$/);
    const tokenA = (await cli('tokens', 'mint', '--client', 'client-a', '--dir', pkiDir)).trim();
    expect(tokenA.split('.')).toHaveLength(3);

    const { url, managementUrl, child, output } = await startServe(env);
    // On the runtime running these tests (Node under `vitest`, Bun under `npm run test:runtimes`).
    expect(output()).toContain(`"runtime":"${CURRENT.name} `);
    const ca = readFileSync(join(pkiDir, 'ca.pem'), 'utf8');
    const as = (cred: { cert: string; key: string }, key: string, token: string) => (path: string) =>
      httpsRequest(`${url.replace('127.0.0.1', 'localhost')}${path}`, {
        ca,
        cert: readFileSync(cred.cert, 'utf8'),
        key: readFileSync(cred.key, 'utf8'),
        headers: { 'x-api-key': key, authorization: `Bearer ${token}` },
      });
    try {
      const a = as(first, keyA, tokenA);
      // Every case read, in the table's order, each answering what the fixture holds.
      for (const row of CASE_OPERATIONS) {
        expect((await a(casePath(row, 'X123456'))).json(), row.id).toStrictEqual(answerOf[row.id]);
      }

      // A second client, with the CLI alone.
      const second = JSON.parse(await cli('pki', 'client', 'client-b', '--dir', pkiDir, '--json')) as {
        serialNumber: string;
        cert: string;
        key: string;
      };
      await cli('clients', 'add', 'client-b', '--permissions', 'getCase');
      const issued = JSON.parse(await cli('keys', 'issue', 'client-b', '--expires-in', '90d', '--json')) as {
        id: string;
        key: string;
        expiresAt: string;
      };
      expect(new Date(issued.expiresAt).getTime()).toBeGreaterThan(Date.now() + 89 * 86_400_000);
      const b = as(
        second,
        issued.key,
        (
          await cli('tokens', 'mint', '--client', 'client-b', '--dir', pkiDir, '--bind-cert', second.cert)
        ).trim(),
      );
      expect((await b('/case/X123456')).status).toBe(200);
      expect((await b('/case/X123456/community-manager')).status).toBe(403);
      expect((await as(second, keyA, tokenA)('/case/X123456')).status).toBe(403);

      const shown = JSON.parse(await cli('clients', 'show', 'client-b', '--json')) as {
        permissions: string[];
        keys: { id: string; status: string }[];
      };
      expect(shown.permissions).toEqual(['getCase']);
      expect(shown.keys.map((k) => [k.id, k.status])).toEqual([[issued.id, 'active']]);
      // With the certificate each presented to serve, and when it ends (pki client: 365 days).
      expect(await cli('clients', 'list')).toMatch(
        new RegExp(
          `^client-a {2}${CASE_READS.join(',')} {2}certificate ${first.serialNumber} expires \\S+ \\(36[45] days left\\)\n` +
            `client-b {2}getCase {2}certificate ${second.serialNumber} expires \\S+ \\(36[45] days left\\)\n$`,
        ),
      );
      const listed = JSON.parse(await cli('clients', 'list', '--json')) as {
        id: string;
        certificate: { serialNumber: string; notAfter: string; seenAt: string } | null;
      }[];
      expect(listed[0]?.certificate).toMatchObject({ serialNumber: first.serialNumber });
      expect(new Date(listed[0]?.certificate?.notAfter ?? 0).getTime()).toBeGreaterThan(
        Date.now() + 364 * 86_400_000,
      );

      await cli('clients', 'suspend', 'client-b');
      expect((await b('/case/X123456')).status).toBe(403);
      await cli('clients', 'resume', 'client-b');
      expect((await b('/case/X123456')).status).toBe(200);

      expect(await cli('keys', 'revoke', issued.id)).toContain(`revoked key ${issued.id}`);
      expect((await b('/case/X123456')).status).toBe(403);
      expect(JSON.parse(await cli('keys', 'list', 'client-b', '--json'))[0].status).toBe('revoked');

      await cli('certs', 'revoke', first.serialNumber, '--client', 'client-a');
      expect((await a('/case/X123456')).status).toBe(403);

      expect(await cli('clients', 'remove', 'client-b')).toContain('removed client client-b');
      expect((await runCliInProcess(['clients', 'show', 'client-b'], env)).status).toBe(1);
      expect(output()).not.toContain(keyA);
      expect(output()).not.toContain(tokenA);

      // The management listener: ready, and counting what was served (by operation, not crn).
      const ready = await fetch(`${managementUrl}/health/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'UP',
        checks: { caseStore: 'UP', accessStore: 'UP', auditStore: 'UP', rateLimitStore: 'UP' },
      });
      const metricsText = await (await fetch(`${managementUrl}/metrics`)).text();
      expect(metricsText).toMatch(
        /^case_read_http_requests_total\{operation="getCase",status="200"\} [1-9]/m,
      );
      expect(metricsText).toMatch(
        /^case_read_http_requests_total\{operation="GET \/\*",status="403"\} [1-9]/m,
      );
      expect(metricsText).not.toContain('X123456');

      // Every request above left one audit record; the chain is intact.
      const records = JSON.parse(await cli('audit', 'query', '--client', 'client-a', '--json')) as {
        operation: string;
        crn: string | null;
        status: number;
      }[];
      expect(records.slice(0, CASE_READS.length).map((r) => [r.operation, r.crn, r.status])).toEqual(
        CASE_READS.map((id) => [id, 'X123456', 200]),
      );
      expect(records.at(-1)?.status).toBe(403);
      expect(
        JSON.parse(await cli('audit', 'query', '--client', 'client-b', '--json')).map(
          (r: { status: number }) => r.status,
        ),
      ).toEqual([200, 403, 403, 403, 200, 403]);
      expect(await cli('audit', 'verify')).toMatch(/^audit chain intact: \d+ record\(s\)\n$/);
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  }, 60_000); // some twenty-five commands (in this process) and a serve

  it('audit verify exits 1 and names the record when the trail was tampered with', () => {
    const copy = join(base, 'audit-tampered.db');
    copyFileSync(join(base, 'audit.db'), copy);
    execOn(copy, 'UPDATE audit SET status = 500 WHERE seq = 2');
    const result = runCli(['audit', 'verify', '--audit-store', `sqlite:${copy}`], env);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(
      'audit chain BROKEN at record 2: its contents do not match its hash: it was changed\n',
    );
  });

  it('grants add, list and remove', async () => {
    await cli('grants', 'add', 'Officer@Probation.Example', 'getCommunityManagerByCrn,getCase');
    expect(JSON.parse(await cli('grants', 'list', '--json'))).toEqual([
      { email: 'officer@probation.example', permissions: ['getCase', 'getCommunityManagerByCrn'] },
    ]);
    await cli('grants', 'remove', 'officer@probation.example', 'getCase');
    expect(await cli('grants', 'list')).toBe('officer@probation.example  getCommunityManagerByCrn\n');
  });

  it('clients add --redact, clients show and clients update --redact (none clears it)', async () => {
    await cli(
      'clients',
      'add',
      'minimised',
      '--permissions',
      'getCase',
      '--redact',
      'communityManager.emailAddress,disabilities',
    );
    expect(await cli('clients', 'show', 'minimised')).toContain(
      'withheld        disabilities, communityManager.emailAddress',
    );
    expect(JSON.parse(await cli('clients', 'show', 'minimised', '--json')).redact).toEqual([
      'disabilities',
      'communityManager.emailAddress',
    ]);
    expect(await cli('clients', 'update', 'minimised', '--redact', 'homeOfficeInterest.notes')).toContain(
      'withheld        homeOfficeInterest.notes',
    );
    expect(
      JSON.parse(await cli('clients', 'update', 'minimised', '--redact', 'none', '--json')).redact,
    ).toEqual([]);
    expect(await cli('clients', 'show', 'minimised')).toContain('withheld        (none)');
    const missing = await runCliInProcess(['clients', 'update', 'nobody', '--redact', 'none'], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no client nobody');
  });

  it('clients add --limited-access, clients show and clients update --limited-access (deny by default)', async () => {
    await cli('clients', 'add', 'enforcer', '--permissions', 'getCase', '--limited-access', 'allow');
    await cli('clients', 'add', 'plain', '--permissions', 'getCase');
    expect(await cli('clients', 'show', 'enforcer')).toContain('limited access  allow');
    expect(JSON.parse(await cli('clients', 'show', 'plain', '--json')).limitedAccess).toBe('deny');
    expect(await cli('clients', 'update', 'enforcer', '--limited-access', 'deny')).toContain(
      'limited access  deny',
    );
    // One setting changed leaves the other as it was.
    await cli('clients', 'update', 'plain', '--redact', 'disabilities');
    const both = JSON.parse(await cli('clients', 'update', 'plain', '--limited-access', 'allow', '--json'));
    expect([both.limitedAccess, both.redact]).toEqual(['allow', ['disabilities']]);
  });

  it('keys issue for an unknown client fails (1) and says how to add it', async () => {
    const result = await runCliInProcess(['keys', 'issue', 'nobody'], env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('no client nobody; add it first with case-read clients add');
  });

  it('config check prints the effective configuration, marking defaults', async () => {
    const out = await cli('config', 'check');
    expect(out).toContain('configuration is valid');
    expect(out).toMatch(/BEARER_MODE +required {2}\(default\)/);
    expect(out).toMatch(/KEEP_ALIVE_TIMEOUT_MS 65000 {2}\(default\)/);
    expect(out).toContain(`ACCESS_STORE     ${access}`);
    const json = JSON.parse(await cli('config', 'check', '--json')) as Record<
      string,
      { value: string; source: string }
    >;
    expect(json.TLS_CLIENT_CA).toEqual({ value: env.TLS_CLIENT_CA, source: 'environment' });
  });

  it('config check shows shared stores with their passwords masked, and the Redis settings', () => {
    const shared = {
      ...env,
      CASE_STORE: 'postgres://svc:hunter2@db.internal:5432/cases?schema=case_read',
      RATE_LIMIT_STORE: 'redis://:s3cret@cache.internal:6379/2',
      RATE_LIMIT_ON_STORE_FAILURE: 'deny',
    };
    // Through the binary: nothing the process writes holds a password, whoever writes it.
    const result = runCli(['config', 'check', '--json'], shared);
    expect(result.status).toBe(0);
    const json = JSON.parse(result.stdout) as Record<string, { value: string; source: string }>;
    expect(json.CASE_STORE?.value).toBe('postgres://svc:********@db.internal:5432/cases?schema=case_read');
    expect(json.RATE_LIMIT_STORE?.value).toBe('redis://:********@cache.internal:6379/2');
    expect(json.RATE_LIMIT_ON_STORE_FAILURE).toEqual({ value: 'deny', source: 'environment' });
    expect(json.RATE_LIMIT_TIMEOUT_MS).toEqual({ value: '50', source: 'default' });
    expect(result.stdout + result.stderr).not.toMatch(/hunter2|s3cret/);
  });

  it('config check prints each hop: where to, and whether it is encrypted and verified', () => {
    const result = runCli(['config', 'check'], {
      ...env,
      CASE_STORE:
        'postgres://svc:hunter2@db.internal:5432/cases?sslmode=verify-full&sslrootcert=/etc/rds.pem',
      AUDIT_STORE: 'postgres://svc@127.0.0.1:5432/cases',
      RATE_LIMIT_STORE: 'redis://:s3cret@cache.internal:6379/2',
      OTEL_TRACES_EXPORTER: 'otlp',
    });
    expect(result.status).toBe(0);
    const hops = result.stdout.slice(result.stdout.indexOf('hops ('));
    expect(hops).toMatch(
      /\n {2}listener +127\.0\.0\.1:\d+ +TLS, each client's certificate verified \(mutual TLS\)/,
    );
    expect(hops).toMatch(/\n {2}management +127\.0\.0\.1:\d+ +plaintext \(metrics, health\)/);
    expect(hops).toMatch(
      /\n {2}CASE_STORE +db\.internal:5432 +TLS, the server's chain and host name verified\n/,
    );
    expect(hops).toMatch(/\n {2}ACCESS_STORE +\(this host\) +no network hop\n/);
    expect(hops).toMatch(
      /\n {2}AUDIT_STORE +127\.0\.0\.1:5432 +plaintext, on loopback \(never leaves this host\)\n/,
    );
    expect(hops).toMatch(/\n {2}RATE_LIMIT_STORE +cache\.internal:6379 +plaintext\n/);
    expect(hops).toMatch(
      /\n {2}STS +sts\.eu-west-2\.amazonaws\.com:443 +TLS, the server's chain and host name verified\n/,
    );
    expect(hops).toMatch(/\n {2}tracing +localhost:4318 +plaintext, on loopback/);
    expect(result.stdout + result.stderr).not.toMatch(/hunter2|s3cret/);
  });

  it('config check and serve refuse unreadable TLS files, naming the variable', async () => {
    const bad = { ...env, TLS_KEY: join(base, 'missing-key.pem') };
    for (const args of [['config', 'check'], ['serve']]) {
      const result = await runCommand(args, bad);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`TLS_KEY: ${bad.TLS_KEY} cannot be read (ENOENT)`);
    }
  });

  it('config check and serve refuse a TLS_KEY others can read, naming it, the file and its mode', async () => {
    const key = join(base, 'exposed-server-key.pem');
    writeFileSync(key, readFileSync(join(pkiDir, 'server-key.pem')), { mode: 0o644 });
    chmodSync(key, 0o644);
    for (const args of [['config', 'check'], ['serve']]) {
      const result = await runCommand(args, { ...env, TLS_KEY: key });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        `TLS_KEY: ${key} is readable by others (mode 0644); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`,
      );
      expect(result.stderr).not.toContain('PRIVATE KEY');
    }
  });

  it('config check and serve refuse a key that is not the certificate’s, naming both variables', async () => {
    // The CA's key, in place of the server certificate's: readable, a key, the wrong one.
    const bad = { ...env, TLS_KEY: join(pkiDir, 'ca-key.pem') };
    for (const args of [['config', 'check'], ['serve']]) {
      const result = await runCommand(args, bad);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('TLS_KEY: is not the key of the certificate in TLS_CERT');
    }
  });

  it('config check and serve refuse an unknown UPSTREAM_TIME_ZONE, naming it; a known one is shown', async () => {
    const upstream = { ...env, CASE_STORE: 'https://records.internal:8443' };
    for (const args of [['config', 'check'], ['serve']]) {
      const result = await runCommand(args, { ...upstream, UPSTREAM_TIME_ZONE: 'Europe/Londres' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('UPSTREAM_TIME_ZONE: UPSTREAM_TIME_ZONE must be an IANA time zone');
    }
    const json = JSON.parse(await cli('config', 'check', '--json')) as Record<
      string,
      { value: string; source: string }
    >;
    expect(json.UPSTREAM_TIME_ZONE).toEqual({ value: 'Europe/London', source: 'default' });
    const set = await runCliInProcess(['config', 'check', '--json'], {
      ...upstream,
      UPSTREAM_TIME_ZONE: 'UTC',
    });
    expect(JSON.parse(set.stdout).UPSTREAM_TIME_ZONE).toEqual({ value: 'UTC', source: 'environment' });
  });

  it('certs sign refuses, naming what is wrong: no issuer, another CN, an unknown client, a bad CSR; serve refuses a CA not trusted', async () => {
    const csrDir = join(base, 'csr');
    mkdirSync(csrDir, { recursive: true });
    const req = (name: string, subject: string) =>
      execFileSync(
        'openssl',
        [
          'req',
          '-new',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-keyout',
          join(csrDir, `${name}-key.pem`),
          '-out',
          join(csrDir, `${name}.csr`),
          '-subj',
          subject,
        ],
        { stdio: 'ignore' },
      );
    req('a', '/CN=client-a');
    const sign = (extra: Record<string, string>, ...args: string[]) =>
      runCliInProcess(['certs', 'sign', join(csrDir, 'a.csr'), ...args], { ...env, ...extra });
    const local = {
      CLIENT_CERT_ISSUER: 'local',
      CLIENT_CA_CERT: join(pkiDir, 'ca.pem'),
      CLIENT_CA_KEY: join(pkiDir, 'ca-key.pem'),
    };
    // The CA's key readable by others: refused, as serve refuses it.
    const exposedKey = join(csrDir, 'exposed-ca-key.pem');
    writeFileSync(exposedKey, readFileSync(local.CLIENT_CA_KEY), { mode: 0o644 });
    chmodSync(exposedKey, 0o644);
    const exposed = await sign({ ...local, CLIENT_CA_KEY: exposedKey }, '--client', 'client-a');
    expect([exposed.status, exposed.stderr]).toEqual([
      1,
      expect.stringContaining(`CLIENT_CA_KEY: ${exposedKey} is readable by others (mode 0644)`),
    ]);
    const none = await sign({}, '--client', 'client-a');
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('no certificate issuer is configured');
    expect((await sign(local)).status).toBe(2);
    const other = await sign(local, '--client', 'someone-else');
    expect([other.status, other.stderr.includes('its subject is CN=client-a, not CN=someone-else')]).toEqual([
      1,
      true,
    ]);
    writeFileSync(join(csrDir, 'junk.csr'), 'not a request');
    const junk = await runCliInProcess(['certs', 'sign', join(csrDir, 'junk.csr'), '--client', 'client-a'], {
      ...env,
      ...local,
    });
    expect([junk.status, junk.stderr.includes('not a PKCS#10 certificate request')]).toEqual([1, true]);
    req('u', '/CN=unknown-client');
    const unknown = await runCliInProcess(
      ['certs', 'sign', join(csrDir, 'u.csr'), '--client', 'unknown-client'],
      {
        ...env,
        ...local,
      },
    );
    expect([unknown.status, unknown.stderr.includes('no client unknown-client')]).toEqual([1, true]);
    expect((await sign(local, '--client', 'client-a', '--days', '398')).status).toBe(2);
    // Only what signing uses: the issuer, the client CA bundle and the access store. Not the
    // server's certificate and key, not the bearer settings (each unset here).
    const only = { ...local, TLS_CLIENT_CA: env.TLS_CLIENT_CA ?? '', ACCESS_STORE: env.ACCESS_STORE ?? '' };
    const signedWithLess = await runCliInProcess(
      ['certs', 'sign', join(csrDir, 'a.csr'), '--client', 'client-a'],
      only,
    );
    expect([signedWithLess.status, signedWithLess.stderr]).toEqual([
      0,
      expect.stringContaining('issued certificate serial'),
    ]);
    expect(signedWithLess.stdout).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const noBundle = await runCliInProcess(['certs', 'sign', join(csrDir, 'a.csr'), '--client', 'client-a'], {
      ...only,
      TLS_CLIENT_CA: '',
    });
    expect(noBundle.status).toBe(1);
    expect(noBundle.stderr).toContain(
      'certs sign needs TLS_CLIENT_CA: required: the path of the CA bundle trusted for client certificates (PEM)',
    );
    // Through the binary: the certificate on stdout, and no private key in anything the process writes.
    const issued = runCli(['certs', 'sign', join(csrDir, 'a.csr'), '--client', 'client-a', '--days', '30'], {
      ...env,
      ...local,
    });
    expect(issued.status).toBe(0);
    expect(issued.stdout).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(issued.stdout + issued.stderr).not.toContain('PRIVATE KEY');
    // A CA that TLS_CLIENT_CA does not hold: what it issued could never be presented.
    const foreign = join(csrDir, 'foreign');
    await cli('pki', 'init', '--dir', foreign);
    for (const args of [['certs', 'sign', join(csrDir, 'a.csr'), '--client', 'client-a'], ['serve']]) {
      const refused = await runCommand(args, {
        ...env,
        ...local,
        CLIENT_CA_CERT: join(foreign, 'ca.pem'),
        CLIENT_CA_KEY: join(foreign, 'ca-key.pem'),
      });
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('CLIENT_CA_CERT: is not in TLS_CLIENT_CA');
    }
    // A key that is not the CA's.
    const mismatched = runCli(['serve'], { ...env, ...local, CLIENT_CA_KEY: join(foreign, 'ca-key.pem') });
    expect(mismatched.stderr).toContain(
      'CLIENT_CA_KEY: is not the key of the CA certificate in CLIENT_CA_CERT',
    );
  });

  it('serve refuses a missing case store, saying how to create it', () => {
    const result = runCli(['serve'], { ...env, CASE_STORE: `sqlite:${join(base, 'absent.db')}` });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('case-read cases import fixtures/cases.json');
  });

  it('serve refuses to start on bad configuration, naming each variable', () => {
    const result = runCli(['serve'], { ...env, PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT: PORT must be a port number');
    expect(result.stderr).toContain('LOG_LEVEL: expected one of');
  });

  it('serve on a port in use names the variable, the address and the likely cause', async () => {
    const memory = { ...env, CASE_STORE: 'memory', BEARER_MODE: 'off', ACCESS_STORE: 'memory' };
    const first = await startServe(memory);
    try {
      const port = new URL(first.url).port;
      const api = runCli(['serve'], { ...memory, HOST: '127.0.0.1', PORT: port, MANAGEMENT_PORT: '0' });
      expect(api.status).toBe(1);
      expect(api.stderr).toContain(`PORT: 127.0.0.1:${port} is in use by another process`);
      expect(api.stderr).toContain('An earlier serve may still be draining');
      expect(api.stderr).not.toContain('unexpected failure');
      const managementPort = new URL(first.managementUrl).port;
      const management = runCli(['serve'], {
        ...memory,
        HOST: '127.0.0.1',
        PORT: '0',
        MANAGEMENT_PORT: managementPort,
      });
      expect(management.status).toBe(1);
      expect(management.stderr).toContain(
        `MANAGEMENT_PORT: 127.0.0.1:${managementPort} is in use by another process`,
      );
    } finally {
      first.child.kill('SIGTERM');
    }
    await once(first.child, 'exit');
  });

  it('serves the bundled fixtures with CASE_STORE=memory', async () => {
    const { url, child } = await startServe({
      ...env,
      CASE_STORE: 'memory',
      BEARER_MODE: 'off',
      ACCESS_STORE: 'memory',
    });
    try {
      const response = await httpsRequest(`${url.replace('127.0.0.1', 'localhost')}/case/A000001`, {
        ca: readFileSync(env.TLS_CLIENT_CA, 'utf8'),
        cert: readFileSync(join(pkiDir, 'client-a.pem'), 'utf8'),
        key: readFileSync(join(pkiDir, 'client-a-key.pem'), 'utf8'),
      });
      // An empty in-memory access directory admits no one: fail closed.
      expect(response.status).toBe(403);
    } finally {
      child.kill('SIGTERM');
    }
    await once(child, 'exit');
  });
});
