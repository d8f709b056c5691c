import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliRun, leavesOf, pathOf } from '../../src/app/cli/program.js';
import { program } from '../../src/app/cli.js';
import {
  SERVICE_VARIABLES,
  STORE_VARIABLE_NAMES,
  STORE_VARIABLES,
} from '../../src/app/composition/config.js';
import { STORE_REGISTRY } from '../../src/app/composition/store-kinds.js';
import { DEVELOPMENT_CLIENT_PERMISSIONS, PERMISSIONS } from '../../src/domain/access/permissions.js';
import { CASE_OPERATIONS } from '../../src/domain/case-operations.js';
import { ROOT } from '../support/cli.js';
import { codeBlocks, headingAnchors, linkTargets, withoutCodeBlocks } from '../support/docs.js';

/**
 * The documents are checked against what they describe (decisions §13): every relative link
 * and anchor in README.md and docs/ resolves, every `case-read …` command they show is one
 * the CLI has (with options it takes), and the configuration page lists exactly the
 * variables the service reads.
 */
const CONFIGURATION = 'docs/operations/configuration.md';

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}
const DOCUMENTS = ['README.md', ...markdownFiles('docs')];
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** What is wrong with one link of `from`: undefined when it resolves. */
function brokenLink(from: string, target: string): string | undefined {
  if (/^(https?:|mailto:)/.test(target)) return undefined;
  const [path = '', anchor] = target.split('#', 2);
  const file = path === '' ? join(ROOT, from) : resolve(join(ROOT, dirname(from)), decodeURI(path));
  if (relative(ROOT, file).startsWith('..')) return `${target}: outside the repository`;
  if (!existsSync(file)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!statSync(file).isFile() || !file.endsWith('.md'))
    return `${target}: an anchor into a file that is not Markdown`;
  return headingAnchors(readFileSync(file, 'utf8')).includes(anchor)
    ? undefined
    : `${target}: no such heading`;
}

/** Each command the CLI runs (`clients add`, `serve`, …), from its tree, with the options it takes. */
function cliCommands(): Map<string, Set<string>> {
  const io = { out: () => {}, err: () => {}, env: {}, stderrIsTty: false };
  return new Map(
    leavesOf(program(new CliRun(io))).map((command) => [
      pathOf(command),
      new Set(command.options.flatMap((o) => (o.long ? [o.long] : []))),
    ]),
  );
}
/** Options every command takes. */
const EVERY_COMMAND = ['--help'];

/** The `case-read …` commands a document shows: in shell blocks (continuations joined) and in inline code. */
function documentedCommands(markdown: string): string[] {
  const found: string[] = [];
  for (const block of codeBlocks(markdown)) {
    if (!['', 'sh', 'bash', 'shell', 'console', 'sh consumer', 'sh operator'].includes(block.info)) continue;
    for (const line of block.body.replace(/\\\n\s*/g, ' ').split('\n')) {
      const command = /^\s*(?:\$\s+)?(case-read\s+.*)$/.exec(line)?.[1];
      if (command) found.push(command.replace(/\s+#.*$/, ''));
    }
  }
  for (const [, inline] of withoutCodeBlocks(markdown).matchAll(/`(case-read\s[^`]+)`/g))
    found.push(inline ?? '');
  return found;
}

/** Why a documented command is not one the CLI has: undefined when it is. */
function unknownCommand(commands: Map<string, Set<string>>, command: string): string | undefined {
  const given = command.split(/\s+/).slice(1);
  // `case-read help COMMAND` is `case-read COMMAND --help`; `case-read --help` lists them all.
  const words = given[0] === 'help' ? [...given.slice(1), '--help'] : given;
  if (['--help', 'COMMAND', 'COMMAND…', '…'].includes(words[0] ?? '')) return undefined;
  const [first = '', second = ''] = words;
  const path = commands.has(`${first} ${second}`) ? `${first} ${second}` : first;
  const options = commands.get(path);
  // Prose may name a group of commands: `case-read keys`, `case-read clients …`.
  const isGroup = [...commands.keys()].some((known) => known.startsWith(`${first} `));
  if (options === undefined && isGroup && ['', '…', '...', '--help'].includes(second)) return undefined;
  if (options === undefined) return `${command}: no such command`;
  const unknown = words
    .filter((w) => /^--[a-z]/.test(w))
    .map((w) => w.split('=')[0] ?? w)
    .filter((o) => !options.has(o) && !EVERY_COMMAND.includes(o));
  return unknown.length > 0 ? `${command}: ${path} takes no ${unknown.join(', ')}` : undefined;
}

describe('the documents', () => {
  it('README.md is the front door: at most 300 lines, with a map of docs/', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(linkTargets(readme).filter((t) => t.startsWith('docs/')).length).toBeGreaterThanOrEqual(8);
  });

  it('every relative link and #anchor in README.md and docs/ resolves', () => {
    expect(DOCUMENTS.length).toBeGreaterThan(5);
    const broken = DOCUMENTS.flatMap((doc) =>
      linkTargets(read(doc)).flatMap((target) => {
        const why = brokenLink(doc, target);
        return why ? [`${doc}: ${why}`] : [];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('every case-read command they show is one the CLI has, with options it takes', () => {
    const commands = cliCommands();
    expect(commands.has('clients add')).toBe(true);
    expect(commands.get('certs sign')?.has('--client')).toBe(true);
    const shown = DOCUMENTS.flatMap((doc) => documentedCommands(read(doc)).map((c) => ({ doc, c })));
    expect(shown.length).toBeGreaterThan(20);
    expect(
      shown.flatMap(({ doc, c }) => {
        const why = unknownCommand(commands, c);
        return why ? [`${doc}: ${why}`] : [];
      }),
    ).toEqual([]);
  });

  it(`${CONFIGURATION} lists every variable the service reads, and no other`, () => {
    const listed = [...read(CONFIGURATION).matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
    const read_ = [
      ...SERVICE_VARIABLES,
      ...STORE_VARIABLE_NAMES,
      ...STORE_REGISTRY.variables().map((v) => v.name),
    ];
    expect([...new Set(listed)].sort()).toEqual([...new Set(read_)].sort());
  });

  it(`${CONFIGURATION}'s row of each store variable names every registered kind that can play its role`, () => {
    const rows = new Map(
      [...read(CONFIGURATION).matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|(.*)$/gm)].map((m) => [m[1], m[2] ?? '']),
    );
    const missing = STORE_VARIABLE_NAMES.flatMap((name) => {
      const { role } = STORE_VARIABLES[name];
      // A kind is named by its form up to its first placeholder: `sqlite:`, `postgres://`, `memory`.
      return STORE_REGISTRY.kinds
        .filter((kind) => kind[role] !== undefined)
        .map((kind) => `\`${/^[a-z]+(:\/\/|:)?/.exec(kind.form)?.[0] ?? kind.form}`)
        .filter((named) => !(rows.get(name) ?? '').includes(named))
        .map((named) => `${name}: ${named}…\``);
    });
    expect(missing).toEqual([]);
  });
});

describe('the permissions, where the operator grants them', () => {
  it('command-line.md names every permission a client can be given, and no other', () => {
    const text = withoutCodeBlocks(read('docs/operations/command-line.md'));
    // The sentences that list them, up to the option named after them.
    const paragraph = /Permissions are the operation ids: (.*?)`--redact`/s.exec(text)?.[1] ?? '';
    const named = [...paragraph.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual([...PERMISSIONS].sort());
  });
});

/** The rows of the first markdown table after `heading` in `text`, each a list of its cells. */
function tableAfter(text: string, heading: string): string[][] {
  const from = text.indexOf(`\n${heading}\n`);
  if (from < 0) return [];
  const lines = text.slice(from).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
  return lines.slice(start + 2, end).map((line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()),
  );
}

describe('the case operations, where the documents show them', () => {
  const code = (value: string) => `\`${value}\``;
  const yesNo = (value: boolean) => (value ? 'yes' : 'no');

  it('the architecture page shows the table of CASE_OPERATIONS, row for row', () => {
    const rows = tableAfter(read('docs/architecture/README.md'), '## The case operations');
    expect(rows).toEqual(
      CASE_OPERATIONS.map((row) => [
        code(row.id),
        code(row.path),
        yesNo(row.bearer),
        row.withholds.length === 0 ? 'none' : row.withholds.map(code).join(', '),
        row.heldAs === null ? 'none' : code(row.heldAs),
        yesNo(DEVELOPMENT_CLIENT_PERMISSIONS.includes(row.id)),
      ]),
    );
  });

  it("the consumers' endpoints table gives each its path, operation and whether it asks for a bearer", () => {
    const rows = tableAfter(read('docs/consumers/endpoints-and-errors.md'), '## Endpoints');
    for (const row of CASE_OPERATIONS) {
      const shown = rows.find((cells) => cells[2] === code(row.id));
      expect(shown, row.id).toBeDefined();
      expect(shown?.slice(0, 2), row.id).toEqual([
        'GET',
        expect.stringMatching(new RegExp(`^\`${row.path.replace(/[{}?]/g, '\\$&')}[?\`]`)),
      ]);
      expect(shown?.[3], row.id).toBe(yesNo(row.bearer));
    }
    // Every other operation asks for none.
    for (const cells of rows.filter((cells) => !CASE_OPERATIONS.some((row) => code(row.id) === cells[2]))) {
      expect(cells[3], cells[1]).toBe('no');
    }
  });

  it("README's Reads row names every case operation", () => {
    const reads = /^\| Reads \|(.*)$/m.exec(read('README.md'))?.[1] ?? '';
    for (const row of CASE_OPERATIONS) expect(reads, row.id).toContain(code(row.id));
  });

  it("subject-access.md's `case` names every part of the held case, each a row's", () => {
    const text = read('docs/operations/subject-access.md');
    const bullet = /^- `case` \(where a copy is kept\):([\s\S]*?)^- /m.exec(text)?.[1] ?? '';
    const named = [...bullet.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]);
    const parts = CASE_OPERATIONS.flatMap((row) => (row.heldAs === null ? [] : [row.heldAs]));
    expect(named.sort()).toEqual([...parts].sort());
  });

  it("stores.md's table of the upstream's reads has a row for each case operation's path", () => {
    const rows = tableAfter(
      withoutCodeBlocks(read('docs/operations/stores.md')).replace(/^ {2}/gm, ''),
      "| Read | Its fields (`crn` is each read's) | A case (200) | Nothing held | Refused (502) |",
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of CASE_OPERATIONS) {
      expect(
        rows.some((cells) => cells[0]?.startsWith(code(row.path))),
        row.path,
      ).toBe(true);
    }
  });
});

describe('the document checks themselves', () => {
  it('catch a dead link, a missing heading, an unknown command and an unknown option', () => {
    expect(brokenLink('README.md', 'docs/no-such-page.md')).toMatch(/no such file/);
    expect(brokenLink('docs/operations/runbook.md', '#no-such-alert')).toMatch(/no such heading/);
    expect(brokenLink('docs/operations/runbook.md', '#casereadinstancedown')).toBeUndefined();
    expect(brokenLink('README.md', '../outside.md')).toMatch(/outside/);
    const commands = cliCommands();
    expect(unknownCommand(commands, 'case-read clients add CN --permissions getCase')).toBeUndefined();
    expect(unknownCommand(commands, 'case-read keys revoke KEY_ID')).toBeUndefined();
    expect(unknownCommand(commands, 'case-read audit keygen --dir DIR')).toBeUndefined();
    expect(unknownCommand(commands, 'case-read clients purge CN')).toMatch(/no such command/);
    expect(unknownCommand(commands, 'case-read keys …')).toBeUndefined();
    expect(unknownCommand(commands, 'case-read pkg …')).toMatch(/no such command/);
    expect(unknownCommand(commands, 'case-read certs sign x.csr --client a --year 1')).toMatch(
      /takes no --year/,
    );
  });
});
