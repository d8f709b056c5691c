import { describe, expect, it } from 'vitest';
import { CliRun, leavesOf, pathOf } from '../../src/app/cli/program.js';
import { main, program } from '../../src/app/cli.js';
import type { Io } from '../../src/app/commands/io.js';
import { runCli } from '../support/cli.js';

/**
 * Every command answers `--help` and `case-read help COMMAND` with its own usage, options and
 * an example (decisions §21); the root lists them all; a wrong option names itself and points
 * to the command's help, in a few lines, exit 2.
 */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, stderrIsTty: false };
  return { io, out, err };
}

async function run(argv: string[]) {
  const { io, out, err } = capture();
  const status = await main(argv, io);
  return { status, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Every command that runs (the tree's leaves), with the long options it takes. */
const leaves = () =>
  leavesOf(program(new CliRun(capture().io))).map((command) => ({
    path: pathOf(command),
    options: command.options.flatMap((o) => (o.long && o.long !== '--help' ? [o.long] : [])),
  }));

const LEAVES = leaves();
const ALL_OPTIONS = new Set(LEAVES.flatMap((l) => l.options));
/** `--store` named as itself, not inside `--access-store` or `--store-x`. */
const names = (text: string, option: string) =>
  new RegExp(`(?<![\\w-])${option.replace(/-/g, '\\-')}(?![\\w-])`).test(text);

describe('help', () => {
  it('knows every command of the old usage text', () => {
    const paths = LEAVES.map((l) => l.path);
    for (const expected of [
      'serve',
      'pki init',
      'pki client',
      'cases import',
      'cases generate',
      'cases access',
      'clients add',
      'clients update',
      'clients list',
      'clients show',
      'clients suspend',
      'clients resume',
      'clients remove',
      'keys issue',
      'keys list',
      'keys revoke',
      'certs sign',
      'certs revoke',
      'grants add',
      'grants remove',
      'grants list',
      'tokens mint',
      'audit verify',
      'audit query',
      'audit checkpoints',
      'audit checkpoint',
      'audit keygen',
      'audit vkey',
      'audit verify-proof',
      'audit prove',
      'audit archive',
      'stores migrate',
      'config check',
      'openapi',
      'witness keygen',
      'witness serve',
      'subject-access',
      'subject-access verify',
    ]) {
      expect(paths).toContain(expected);
    }
  });

  it.each(LEAVES)(
    '$path --help and help $path: its own usage, its options and no other, an example',
    async ({ path, options }) => {
      const words = path.split(' ');
      const byOption = await run([...words, '--help']);
      const byCommand = await run(['help', ...words]);
      expect(byOption.status).toBe(0);
      expect(byOption.stderr).toBe('');
      expect(byCommand).toEqual(byOption);
      const help = byOption.stdout;
      expect(help.split('\n')[0]).toMatch(new RegExp(`^Usage: case-read ${path}\\b`));
      for (const option of options) expect(names(help, option), `${path} --help names ${option}`).toBe(true);
      const others = [...ALL_OPTIONS].filter((o) => !options.includes(o) && names(help, o));
      expect(others, `${path} --help names options it does not take`).toEqual([]);
      expect(help).toMatch(
        new RegExp(`\\nExamples?:\\n(\\s+\\$ .*\\n)*\\s+\\$ (\\S+=\\S+ )*case-read ${path}\\b`),
      );
    },
  );

  it('case-read --help and case-read help list every command, one line each', async () => {
    const byOption = await run(['--help']);
    const byCommand = await run(['help']);
    expect(byOption.status).toBe(0);
    expect(byCommand).toEqual(byOption);
    const lines = byOption.stdout.split('\n');
    for (const { path } of LEAVES) {
      const line = lines.find((l) => l.startsWith(`  ${path} `) || l === `  ${path}`);
      expect(line, path).toBeDefined();
      // The summary starts on the same line.
      expect(line?.trim().length, path).toBeGreaterThan(path.length + 10);
    }
  });

  it('a group answers with its commands', async () => {
    const result = await run(['clients', '--help']);
    expect(result.status).toBe(0);
    for (const sub of ['add', 'update', 'list', 'show', 'suspend', 'resume', 'remove']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${sub}\\b`, 'm'));
    }
  });
});

describe('a wrong argument', () => {
  it.each([
    [['clients', 'list', '--bogus'], "unknown option '--bogus'", 'clients list'],
    [['audit', 'checkpoint', '--crn', 'X1'], "unknown option '--crn'", 'audit checkpoint'],
    [['pki', 'init', '--dir', '/tmp/x', '--day', '3'], "unknown option '--day'", 'pki init'],
    [['tokens', 'mint', '--client'], "option '--client <CN>' argument missing", 'tokens mint'],
    [['pki', 'init'], "required option '--dir <DIR>' not specified", 'pki init'],
    [['pki', 'client', '--dir', '/tmp/x'], "missing required argument 'CN'", 'pki client'],
    [['serve', 'extra'], 'too many arguments', 'serve'],
  ])('%j: %s, exit 2, pointing to the help of %s', async (argv, message, path) => {
    const result = await run(argv);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n');
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(lines[0]).toMatch(/^case-read: /);
    expect(result.stderr).toContain(message);
    expect(lines.at(-1)).toBe(`Run 'case-read ${path} --help' for its usage.`);
  });

  it('a mistyped required option is the unknown option it is, with the one meant', async () => {
    const result = await run(['clients', 'add', 'client-a', '--permission', 'getCase']);
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')).toEqual([
      "case-read: unknown option '--permission'",
      '(Did you mean --permissions?)',
      "Run 'case-read clients add --help' for its usage.",
    ]);
    // And its help says it is required.
    expect((await run(['clients', 'add', '--help'])).stdout.replace(/\s+/g, ' ')).toMatch(
      /--permissions <P\[,P\.\.\.\]> .*renewCertificate, getSubjectAccessRequest, getSubjectAccessRequestTemplate \(required\)/,
    );
  });

  it('suggests the option meant', async () => {
    const result = await run(['cases', 'generate', '--count', '3', '--sed', '4']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('(Did you mean --seed?)');
  });

  it('an unknown command points to the list', async () => {
    const result = await run(['frobnicate']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "case-read: unknown command 'frobnicate'\nRun 'case-read --help' for the commands.",
    );
  });

  it('a value the command refuses points to its help too', async () => {
    const result = await run(['pki', 'client', 'bad cn!', '--dir', '/tmp/x']);
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')).toEqual([
      'case-read: CN must be 1-64 characters: letters, digits, dot, underscore, hyphen',
      "Run 'case-read pki client --help' for its usage.",
    ]);
  });

  it('the binary exits 0 on --help and 2 on an unknown option, as a shell sees it', () => {
    const help = runCli(['clients', 'add', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: case-read clients add/);
    const wrong = runCli(['clients', 'add', 'c', '--permissions', 'getCase', '--bogus']);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("unknown option '--bogus'");
  });
});
