import { constants } from 'node:buffer';
import cliProgress from 'cli-progress';
import { isActive, type LimitedAccess } from '../../domain/access/limited-access.js';
import { Crn, type CrnFormat } from '../../domain/crn.js';
import type { CaseRecord } from '../../domain/types.js';
import { CaseFileError, parseCaseFileText } from '../../formats/case-file.js';
import type { CaseWriter } from '../../ports/case-repository.js';
import type { Opened, StoreWiring } from '../../ports/stores.js';
import { readRegularFileSync } from '../composition/operator.js';
import { STORE_REGISTRY } from '../composition/store-kinds.js';
import { generateCases, MAX_GENERATED_CASES } from '../generate.js';
import type { StoreRef } from '../stores.js';
import { usage } from './arguments.js';
import { storeOption, storeWiringOf } from './command-stores.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, type JsonGiven, report } from './io.js';

/** The store cases are written to: a usage error when it cannot be written. */
function writableStore(
  option: string | undefined,
  io: Io,
): { ref: StoreRef; open: (wiring: StoreWiring) => Promise<Opened<CaseWriter>> } {
  const ref = storeOption('--store', 'CASE_STORE', option, io.env);
  if (!STORE_REGISTRY.acceptsCaseWrites(ref)) {
    throw new UsageError(
      `--store: cases cannot be written to ${ref.kind}; use ${STORE_REGISTRY.caseWriterForms()}`,
    );
  }
  return { ref, open: (wiring) => STORE_REGISTRY.openCaseWriter(ref, wiring) };
}

/** What the cases commands are given: the store (else CASE_STORE), and JSON output. */
interface StoreGiven extends JsonGiven {
  readonly store?: string | undefined;
}

/**
 * Most a case file may hold: as much as one string can (`JSON.parse` takes the file as one),
 * so that every file that could be imported still can be, and no larger one is read.
 */
const MAX_CASE_FILE_BYTES = constants.MAX_STRING_LENGTH;

/**
 * A case file named on the command line, read as every named file is (decisions §20: a FIFO,
 * a directory or a device refused at once, never waited on; `FILE cannot be read (ENOENT)`),
 * then validated as the memory store validates its fixtures.
 */
function readCaseFile(file: string, crnFormat: CrnFormat): CaseRecord[] {
  const { bytes } = readRegularFileSync('', file, (message) => new CommandError(message.trimStart()), {
    maxBytes: MAX_CASE_FILE_BYTES,
  });
  return parseCaseFileText(bytes.toString('utf8'), { source: file, crnFormat });
}

export async function importCases(files: readonly string[], values: StoreGiven, io: Io): Promise<number> {
  const store = writableStore(values.store, io);
  const context = storeWiringOf(io);
  const { crnFormat } = context;
  // Every file is read and validated before anything is written: a bad file loses nothing.
  const records: CaseRecord[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    for (const record of readCaseFile(file, crnFormat)) {
      const other = seen.get(record.crn);
      if (other !== undefined) throw new CaseFileError(file, [`crn ${record.crn} is also in ${other}`]);
      seen.set(record.crn, file);
      records.push(record);
    }
  }
  const shown = STORE_REGISTRY.display(store.ref);
  const opened = await store.open(context);
  try {
    await opened.value.write(records);
    const total = await opened.value.count();
    report(
      io,
      values.json,
      { imported: records.length, total, store: shown },
      `imported ${records.length} case(s) into ${shown} (${total} held)`,
    );
  } finally {
    await opened.close();
  }
  return EXIT.ok;
}

const BATCH_SIZE = 10_000;

export async function generate(
  values: StoreGiven & { readonly count: string; readonly seed: string },
  io: Io,
): Promise<number> {
  if (!/^\d+$/.test(values.count) || Number(values.count) < 1 || Number(values.count) > MAX_GENERATED_CASES) {
    throw new UsageError(`--count must be a whole number 1..${MAX_GENERATED_CASES}`);
  }
  const seedRaw = values.seed;
  if (!/^\d+$/.test(seedRaw) || Number(seedRaw) > 0xffffffff) {
    throw new UsageError('--seed must be a whole number 0..4294967295');
  }
  const count = Number(values.count);
  const store = writableStore(values.store, io);
  const shown = STORE_REGISTRY.display(store.ref);
  const opened = await store.open(storeWiringOf(io));
  const writer = opened.value;
  const bar = new cliProgress.SingleBar(
    {
      format: 'generating {bar} {percentage}% | {value}/{total} cases | {eta_formatted} left',
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = performance.now();
  if (io.stderrIsTty && !values.json) bar.start(count, 0);
  // One batch is written while the next is generated: a database store works in parallel
  // with the generator instead of waiting for it.
  let inFlight: Promise<void> = Promise.resolve();
  try {
    let batch: CaseRecord[] = [];
    let written = 0;
    const flush = async (records: CaseRecord[]) => {
      await inFlight;
      inFlight = writer.write(records).then(() => {
        written += records.length;
        bar.update(written);
      });
    };
    for (const record of generateCases(count, Number(seedRaw))) {
      batch.push(record);
      if (batch.length === BATCH_SIZE) {
        await flush(batch);
        batch = [];
      }
    }
    await flush(batch);
    await inFlight;
  } finally {
    await inFlight.catch(() => {});
    bar.stop();
    await opened.close();
  }
  const seconds = (performance.now() - started) / 1000;
  report(
    io,
    values.json,
    { generated: count, seed: Number(seedRaw), store: shown, seconds },
    `generated ${count} case(s) with seed ${seedRaw} into ${shown} in ${seconds.toFixed(1)} s`,
  );
  return EXIT.ok;
}

/** The lines that describe a case's limited-access rules to an operator, each marked active or ended at `now`. */
function describeLimitedAccess(rules: LimitedAccess | null, now: Date): string[] {
  if (rules === null)
    return ['no limited-access rules: every reader admitted to the operation sees the case'];
  const state = (until: string | null) =>
    until === null ? 'active, no end' : isActive(until, now) ? `active until ${until}` : `ended ${until}`;
  return [
    `exclusions      ${rules.exclusions.length === 0 ? '(none)' : ''}`,
    ...rules.exclusions.map((e) => `  ${e.user}  ${state(e.until)}`),
    `  message       ${rules.exclusionMessage ?? '(generic)'}`,
    `restriction     ${rules.restriction === null ? '(none)' : `only ${rules.restriction.users.length} named user(s), ${state(rules.restriction.until)}`}`,
    ...(rules.restriction?.users ?? []).map((user) => `  ${user}`),
    `  message       ${rules.restrictionMessage ?? '(generic)'}`,
  ];
}

/** `cases access CRN`: the case's limited-access rules as held. */
export async function access(crnRaw: string, values: StoreGiven, io: Io): Promise<number> {
  const ref = storeOption('--store', 'CASE_STORE', values.store, io.env);
  if (STORE_REGISTRY.decidesLimitedAccess(ref)) {
    throw new UsageError(
      `--store: ${ref.kind} decides limited access itself and holds no rules to show; ask the system of record`,
    );
  }
  const wiring = storeWiringOf(io);
  const crn = usage(() => Crn.parse(crnRaw, wiring.crnFormat));
  const opened = await STORE_REGISTRY.openCaseRepository(ref, wiring);
  try {
    // Every read brings the case's rules: the smallest part of the case is asked for.
    const held = await opened.value.findHomeOfficeInterest(crn);
    if (held === undefined) throw new CommandError(`no case ${crn.value} in ${STORE_REGISTRY.display(ref)}`);
    report(io, values.json, { crn: crn.value, limitedAccess: held.limitedAccess }, [
      `case ${crn.value}`,
      ...describeLimitedAccess(held.limitedAccess, new Date()).map((l) => `  ${l}`),
    ]);
  } finally {
    await opened.close();
  }
  return EXIT.ok;
}
