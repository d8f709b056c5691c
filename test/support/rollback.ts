import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { codeBlocks, withoutCodeBlocks } from './docs.js';

/**
 * The way back to the previous release as docs/operations/upgrading.md#rolling-back gives it,
 * read from the document so the upgrade test runs exactly what an operator is told to run:
 * the PostgreSQL block, the SQLite commands (one `sqlite3 data/FILE.db "…"` line a store),
 * and the statements that set a store back before upgrading again.
 */
export interface DocumentedRollback {
  /** The `sql` block, run in the stores' schema. */
  readonly postgres: string;
  /** Each `sqlite3 data/FILE.db "SQL"` line of the `sh` block: the file's name and its SQL. */
  readonly sqlite: readonly SqliteCommand[];
  /** Before upgrading again: the PostgreSQL `UPDATE case_read_schema …` statements, and the SQLite commands. */
  readonly setBack: { readonly postgres: readonly string[]; readonly sqlite: readonly SqliteCommand[] };
}

export interface SqliteCommand {
  /** The database file's name, `access.db`. */
  readonly file: string;
  readonly sql: string;
}

const SQLITE_COMMAND = /^sqlite3 data\/([\w.-]+\.db) "([^"]+)"$/;

const sqliteCommand = (line: string): SqliteCommand => {
  const match = SQLITE_COMMAND.exec(line.trim());
  if (!match?.[1] || !match[2])
    throw new Error(`upgrading.md: not a sqlite3 command of the form sqlite3 data/FILE.db "SQL": ${line}`);
  return { file: match[1], sql: match[2] };
};

export function documentedRollback(): DocumentedRollback {
  const text = readFileSync(join(ROOT, 'docs/operations/upgrading.md'), 'utf8');
  const start = text.indexOf('\n## Rolling back\n');
  if (start < 0) throw new Error('upgrading.md has no "## Rolling back" section');
  const next = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, next < 0 ? undefined : next);
  // The blocks sit in a list item, two spaces in.
  const blocks = codeBlocks(section.replace(/^ {2}/gm, ''));
  const postgres = blocks.find((block) => block.info === 'sql')?.body;
  const shell = blocks.find((block) => block.info === 'sh')?.body;
  if (postgres === undefined || shell === undefined) {
    throw new Error('upgrading.md#rolling-back has no ```sql block (PostgreSQL) or no ```sh block (SQLite)');
  }
  const sqlite = shell
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map(sqliteCommand);
  const prose = withoutCodeBlocks(section);
  // The paragraph that gives them, not the prose after it (which names the form `sqlite3 data/FILE.db "…"`).
  const again = prose.slice(prose.indexOf('To upgrade again later')).split(/\n[ \t]*\n/)[0] ?? '';
  const spans = [...again.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
  return {
    postgres,
    sqlite,
    setBack: {
      postgres: spans.filter((span) => span.startsWith('UPDATE case_read_schema')),
      sqlite: spans.filter((span) => span.startsWith('sqlite3 ')).map(sqliteCommand),
    },
  };
}
