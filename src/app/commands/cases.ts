import cliProgress from 'cli-progress';
import { CaseFileError, loadCaseFile } from '../../adapters/memory/case-file.js';
import { SqliteCaseWriter } from '../../adapters/sqlite/case-store.js';
import type { CaseRecord } from '../../domain/types.js';
import { loadSome, parseCaseStore } from '../config.js';
import { generateCases, MAX_GENERATED_CASES } from '../generate.js';
import { EXIT, type Io, parse, report, storeOption, UsageError } from './common.js';

function sqlitePathOf(store: string | undefined, env: Io['env']): string {
  const parsed = storeOption('--store', 'CASE_STORE', store, env, parseCaseStore);
  if (parsed.kind !== 'sqlite')
    throw new UsageError('--store: cases can only be written to a sqlite:PATH store');
  return parsed.path;
}

async function importCases(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { store: { type: 'string' }, json: { type: 'boolean' } });
  if (positionals.length === 0) throw new UsageError('cases import needs at least one FILE');
  const path = sqlitePathOf(values.store, io.env);
  const crnFormat = loadSome(io.env, ['CRN_PATTERN']).CRN_PATTERN;
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
    report(
      io,
      values.json,
      { imported: records.length, total, store: `sqlite:${path}` },
      `imported ${records.length} case(s) into sqlite:${path} (${total} held)`,
    );
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
  if (values.count === undefined) throw new UsageError('cases generate needs --count N');
  if (!/^\d+$/.test(values.count) || Number(values.count) < 1 || Number(values.count) > MAX_GENERATED_CASES) {
    throw new UsageError(`--count must be a whole number 1..${MAX_GENERATED_CASES}`);
  }
  const seedRaw = values.seed ?? '1';
  if (!/^\d+$/.test(seedRaw) || Number(seedRaw) > 0xffffffff) {
    throw new UsageError('--seed must be a whole number 0..4294967295');
  }
  const count = Number(values.count);
  const path = sqlitePathOf(values.store, io.env);
  const writer = SqliteCaseWriter.open(path);
  const bar = new cliProgress.SingleBar(
    {
      format: 'generating {bar} {percentage}% | {value}/{total} cases | {eta_formatted} left',
      stream: process.stderr,
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
  report(
    io,
    values.json,
    { generated: count, seed: Number(seedRaw), store: `sqlite:${path}`, seconds },
    `generated ${count} case(s) with seed ${seedRaw} into sqlite:${path} in ${seconds.toFixed(1)} s`,
  );
  return EXIT.ok;
}

export async function cases(sub: string | undefined, args: string[], io: Io): Promise<number> {
  if (sub === 'import') return importCases(args, io);
  if (sub === 'generate') return generate(args, io);
  throw new UsageError(
    sub === undefined ? 'cases needs a subcommand: import or generate' : `unknown cases subcommand: ${sub}`,
  );
}
