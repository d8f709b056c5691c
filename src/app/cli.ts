import { type ParseArgsConfig, parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { CaseFileError, loadCaseFile } from '../adapters/memory/case-file.js';
import { startServer } from '../adapters/node/server.js';
import { CaseStoreError, SqliteCaseWriter } from '../adapters/sqlite/case-store.js';
import type { CaseRecord } from '../domain/types.js';
import { buildService, createLogger } from './composition.js';
import { ConfigError, loadConfig, parseCaseStore } from './config.js';
import { generateCases, MAX_GENERATED_CASES } from './generate.js';

/** Exit statuses: 0 success, 1 failure, 2 usage. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export const USAGE = `usage:
  case-read serve
  case-read cases import FILE... [--store sqlite:PATH] [--json]
  case-read cases generate --count N [--store sqlite:PATH] [--seed S] [--json]
  case-read help

Configuration is read from environment variables (see README, "Configuration").
--store defaults to CASE_STORE, else sqlite:./data/cases.db.`;

class UsageError extends Error {}

interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: Record<string, string | undefined>;
  readonly stderrIsTty: boolean;
}

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stderrIsTty: Boolean(process.stderr.isTTY),
};

function sqlitePathOf(store: string | undefined, env: Io['env']): string {
  const value = store ?? (env.CASE_STORE || 'sqlite:./data/cases.db');
  const parsed = parseCaseStore(value);
  if ('error' in parsed) throw new UsageError(`--store: ${parsed.error}`);
  if (parsed.kind !== 'sqlite')
    throw new UsageError('--store: cases can only be written to a sqlite:PATH store');
  return parsed.path;
}

function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function serve(args: string[], io: Io): Promise<number> {
  const { positionals } = parse(args, {});
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got ${positionals.join(' ')}`);
  const config = loadConfig(io.env);
  const logger = createLogger(config.LOG_LEVEL);
  const service = buildService(config, logger);
  const server = await startServer(service.app.fetch, { host: config.HOST, port: config.PORT });
  logger.info({ url: server.url, caseStore: service.caseStore }, 'listening');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      server
        .close()
        .catch((error: Error) => logger.error({ err: { message: error.message } }, 'close failed'))
        .finally(() => {
          service.close();
          resolve();
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return EXIT.ok;
}

async function importCases(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { store: { type: 'string' }, json: { type: 'boolean' } });
  if (positionals.length === 0) throw new UsageError('cases import needs at least one FILE');
  const path = sqlitePathOf(values.store as string | undefined, io.env);
  const crnFormat = loadConfig({ CRN_PATTERN: io.env.CRN_PATTERN }).CRN_PATTERN;
  // Every file is read and validated before anything is written: a bad file loses nothing.
  const records: CaseRecord[] = [];
  const seen = new Map<string, string>();
  for (const file of positionals) {
    for (const record of loadCaseFile(file, { crnFormat })) {
      const other = seen.get(record.crn);
      if (other !== undefined) throw new CaseFileError(file, [`crn ${record.crn} is also in ${other}`]);
      seen.set(record.crn, file);
      records.push(record);
    }
  }
  const writer = SqliteCaseWriter.open(path);
  try {
    writer.write(records);
    const total = writer.count();
    if (values.json) io.out(JSON.stringify({ imported: records.length, total, store: `sqlite:${path}` }));
    else io.out(`imported ${records.length} case(s) into sqlite:${path} (${total} held)`);
  } finally {
    writer.close();
  }
  return EXIT.ok;
}

const BATCH_SIZE = 10_000;

async function generate(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    count: { type: 'string' },
    seed: { type: 'string' },
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0)
    throw new UsageError(`cases generate takes no positional arguments, got ${positionals.join(' ')}`);
  const countRaw = values.count as string | undefined;
  if (countRaw === undefined) throw new UsageError('cases generate needs --count N');
  if (!/^\d+$/.test(countRaw) || Number(countRaw) < 1 || Number(countRaw) > MAX_GENERATED_CASES) {
    throw new UsageError(`--count must be a whole number 1..${MAX_GENERATED_CASES}`);
  }
  const seedRaw = (values.seed as string | undefined) ?? '1';
  if (!/^\d+$/.test(seedRaw) || Number(seedRaw) > 0xffffffff) {
    throw new UsageError('--seed must be a whole number 0..4294967295');
  }
  const count = Number(countRaw);
  const path = sqlitePathOf(values.store as string | undefined, io.env);
  const writer = SqliteCaseWriter.open(path);
  const bar = new cliProgress.SingleBar(
    {
      format: 'generating {bar} {percentage}% | {value}/{total} cases | {eta_formatted} left',
      stream: process.stderr,
      noTTYOutput: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = performance.now();
  if (io.stderrIsTty && !values.json) bar.start(count, 0);
  try {
    let batch: CaseRecord[] = [];
    let written = 0;
    for (const record of generateCases(count, Number(seedRaw))) {
      batch.push(record);
      if (batch.length === BATCH_SIZE) {
        writer.write(batch);
        written += batch.length;
        batch = [];
        bar.update(written);
      }
    }
    writer.write(batch);
    written += batch.length;
    bar.update(written);
  } finally {
    bar.stop();
    writer.close();
  }
  const seconds = (performance.now() - started) / 1000;
  if (values.json)
    io.out(JSON.stringify({ generated: count, seed: Number(seedRaw), store: `sqlite:${path}`, seconds }));
  else
    io.out(`generated ${count} case(s) with seed ${seedRaw} into sqlite:${path} in ${seconds.toFixed(1)} s`);
  return EXIT.ok;
}

/** Runs the CLI and returns the exit status. */
export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        return await serve(argv.slice(1), io);
      case 'cases':
        if (sub === 'import') return await importCases(rest, io);
        if (sub === 'generate') return await generate(rest, io);
        throw new UsageError(
          sub === undefined
            ? 'cases needs a subcommand: import or generate'
            : `unknown cases subcommand: ${sub}`,
        );
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return EXIT.ok;
      case undefined:
        throw new UsageError('a command is needed');
      default:
        throw new UsageError(`unknown command: ${command}`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`case-read: ${error.message}`);
      io.err(USAGE);
      return EXIT.usage;
    }
    if (error instanceof ConfigError || error instanceof CaseFileError || error instanceof CaseStoreError) {
      io.err(`case-read: ${error.message}`);
      return EXIT.failure;
    }
    io.err(`case-read: unexpected failure: ${(error as Error).message}`);
    return EXIT.failure;
  }
}
