// subject-access: what a subject access request costs on a long trail (decisions §22). A trail
// of --records N (default 10,000,000; 20,000 under --smoke) of which --archived M (default
// 9,000,000; 15,000 under --smoke) were archived by `case-read audit archive` and let go of by
// the store, made once and cached (bench/lib/sar-trail.mjs says where; a smoke run's is not
// kept). One crn has 200 records spread over the whole trail (most of them archived), another
// 20,000. Measured, each as a process of its own (wall time, CPU time, peak RSS) or against
// `serve`:
//   - the 200-record crn's SAR: `case-read subject-access --crn X --archive DIR --vkey V`, over
//     the whole trail and over a window of three months; and `GET /subject-access-request` of
//     `serve` on a copy of the store with AUDIT_ARCHIVE_DIR (its time, time to first byte and
//     the server's CPU time), at serve's default request deadline (5 s) and at its largest (60 s);
//   - the full scan before: `audit query --crn X --archive DIR` plus `audit query --crn X` on the
//     store, which read every archived record;
//   - the 20,000-record crn's SAR: its peak RSS against the answer's size (it is streamed), and
//     through serve the server's peak RSS before and after.
// Speed is judged by reading the output (the SAR's goal: under 1 s), never asserted here.
import { spawn } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { distUrl, ROOT } from '../lib/paths.mjs';
import { stop } from '../lib/processes.mjs';
import { BIG_CRN, buildWritesCrnIndex, sarTrail, TARGET_CRN } from '../lib/sar-trail.mjs';

const say = (line) => process.stdout.write(`${line}\n`);
const MIB = 2 ** 20;
const sizeText = (bytes) =>
  bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

/** `case-read ARGV` in a process of its own, its stdout to `outFile`; its own wall time, CPU time and peak RSS reported by itself. */
const RUNNER = `
  const { main } = await import(process.env.CLI);
  const t0 = performance.now();
  const status = await main(process.argv.slice(1));
  const usage = process.resourceUsage();
  process.stderr.write('\\n' + JSON.stringify({ status, wallMs: Math.round(performance.now() - t0), cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000), maxRssMiB: Math.round(usage.maxRSS / 1024) }) + '\\n');
  process.exit(status);
`;
function timed(argv, outFile, env) {
  const out = openSync(outFile, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', RUNNER, ...argv], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, CLI: distUrl('app/cli.js'), ...env },
    stdio: ['ignore', out, 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', () => {
      closeSync(out);
      const processMs = Math.round(performance.now() - started);
      const last = stderr.trim().split('\n').at(-1) ?? '';
      const measured = last.startsWith('{') ? JSON.parse(last) : { status: child.exitCode };
      if (measured.status !== 0) {
        reject(new Error(`case-read ${argv.join(' ')} exited ${measured.status}: ${stderr.trim()}`));
        return;
      }
      resolve({ ...measured, processMs, bytes: statSync(outFile).size });
    });
  });
}

/** How many disclosures a SAR answer (the content, as the command prints it) holds. */
const disclosuresIn = (file) => JSON.parse(readFileSync(file, 'utf8')).content.disclosures.length;

/** CPU time (user + system) the process has used, in ms (at 100 Hz), and its peak RSS so far (VmHWM), in MiB. */
const cpuMsOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const peakRssMiB = (pid) =>
  Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024);

/** One `GET path` with the client's certificate: status, time to first byte, total time, bytes, and the body when `keep`. */
function get({ port, path, headers, tls, keep }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      { host: '127.0.0.1', port, path, servername: 'localhost', headers, agent: false, ...tls },
      (res) => {
        const ttfbMs = Math.round(performance.now() - started);
        let bytes = 0;
        const chunks = [];
        res.on('data', (c) => {
          bytes += c.length;
          if (keep) chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            ttfbMs,
            wallMs: Math.round(performance.now() - started),
            bytes,
            complete: res.complete,
            body: keep ? Buffer.concat(chunks).toString('utf8') : undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

export async function subjectAccess({ options, settings, fixtures, servers }) {
  const { smoke } = options;
  const records = options.sarRecords ?? (smoke ? 20_000 : 10_000_000);
  const archived = options.sarArchived ?? (smoke ? 15_000 : 9_000_000);
  if (
    !(
      Number.isSafeInteger(records) &&
      Number.isSafeInteger(archived) &&
      archived >= 256 &&
      archived < records
    )
  ) {
    throw new Error(
      `subject-access: --archived (${archived}) must be at least 256 and below --records (${records})`,
    );
  }
  if (!existsSync(new URL(distUrl('app/commands/subject-access.js')))) {
    throw new Error('subject-access: this build has no `case-read subject-access` (npm run build)');
  }
  const targetCount = 200;
  const bigCount = Math.min(20_000, Math.floor(records / 10));
  const trail = await sarTrail({
    records,
    archived,
    targetCount,
    bigCount,
    archiveStep: 5_000_000,
    caseRead: fixtures.caseRead,
    // A smoke run's trail takes seconds: made in the run's own directory, never cached.
    ...(smoke ? { root: fixtures.dir } : {}),
  });
  const { meta } = trail;
  const held = records - meta.archive.runs.at(-1).to;
  say(
    `trail: ${records} records over ${meta.trailStart.slice(0, 10)}..${meta.trailEnd.slice(0, 10)}, ${records - held} archived (${meta.archive.runs.length} run(s) of audit archive, ${(meta.archive.ms / 1000).toFixed(1)} s${meta.archive.crnIndex ? ', with its crn index' : ', NO crn index'}), ${held} in the store; ${TARGET_CRN} has ${targetCount} records, ${BIG_CRN} ${bigCount}${smoke ? '' : `; cached in ${trail.dir}`}`,
  );
  if (!meta.archive.crnIndex && buildWritesCrnIndex()) throw new Error('the archive has no crn index');
  const out = (name) => join(fixtures.dir, `sar-${name}.out`);
  const sarArgs = (crn, window = []) => [
    'subject-access',
    '--crn',
    crn,
    ...window,
    '--archive',
    trail.archive,
    '--vkey',
    trail.vkeyFile,
    '--audit-store',
    trail.store,
  ];
  const line = (label, m, extra = '') =>
    `${label.padEnd(30)} wall ${String(m.wallMs).padStart(6)} ms (process ${m.processMs} ms)  cpu ${String(m.cpuMs).padStart(6)} ms  max rss ${m.maxRssMiB} MiB${extra}`;

  // (b) The full scan before: every archived record read, and the store's.
  const scanArchive = await timed(
    [
      'audit',
      'query',
      '--crn',
      TARGET_CRN,
      '--archive',
      trail.archive,
      '--vkey',
      trail.vkeyFile,
      '--limit',
      '9999999',
      '--json',
    ],
    out('scan-archive'),
  );
  const scanStore = await timed(
    ['audit', 'query', '--crn', TARGET_CRN, '--audit-store', trail.store, '--limit', '9999999', '--json'],
    out('scan-store'),
  );
  const scanned = {
    archive: JSON.parse(readFileSync(out('scan-archive'), 'utf8')).length,
    store: JSON.parse(readFileSync(out('scan-store'), 'utf8')).length,
  };
  const fullScan = {
    records: scanned.archive + scanned.store,
    wallMs: scanArchive.wallMs + scanStore.wallMs,
    processMs: scanArchive.processMs + scanStore.processMs,
    cpuMs: scanArchive.cpuMs + scanStore.cpuMs,
    maxRssMiB: Math.max(scanArchive.maxRssMiB, scanStore.maxRssMiB),
    archive: scanArchive,
    store: scanStore,
  };
  say(line(`full scan (archive)`, scanArchive, `  ${scanned.archive} records`));
  say(line(`full scan (store)`, scanStore, `  ${scanned.store} records`));

  // (a) The SAR of the 200-record crn, offline: the whole trail, then a window of three months.
  const sarRuns = [];
  for (let r = 0; r < settings.rounds; r++) sarRuns.push(await timed(sarArgs(TARGET_CRN), out('sar')));
  const sar = {
    ...sarRuns.find((m) => m.wallMs === median(sarRuns.map((x) => x.wallMs))),
    disclosures: disclosuresIn(out('sar')),
  };
  if (sar.disclosures !== fullScan.records) {
    throw new Error(
      `the SAR disclosed ${sar.disclosures} records of ${TARGET_CRN}; the full scan found ${fullScan.records}`,
    );
  }
  say(
    line(
      `sar offline ${TARGET_CRN}`,
      sar,
      `  ${sar.disclosures} disclosures  answer ${sizeText(sar.bytes)}  (median of ${sarRuns.length})`,
    ),
  );
  const window = ['--from', '2026-02-01', '--to', '2026-04-30'];
  const windowed = {
    ...(await timed(sarArgs(TARGET_CRN, window), out('sar-window'))),
    disclosures: disclosuresIn(out('sar-window')),
  };
  say(
    line(
      `sar offline ${TARGET_CRN} ${window[1]}..${window[3]}`,
      windowed,
      `  ${windowed.disclosures} disclosures`,
    ),
  );
  const ratios = {
    wall: Math.round((sar.wallMs / fullScan.wallMs) * 10_000) / 10_000,
    cpu: Math.round((sar.cpuMs / fullScan.cpuMs) * 10_000) / 10_000,
  };
  say(
    `sar/full scan: wall ${ratios.wall}, cpu ${ratios.cpu} (the full scan takes ${(fullScan.wallMs / Math.max(1, sar.wallMs)).toFixed(1)}x the SAR's wall time)`,
  );

  // (c) The SAR of the 20,000-record crn, offline: its peak RSS against the answer's size.
  const big = { ...(await timed(sarArgs(BIG_CRN), out('sar-big'))) };
  big.disclosures = disclosuresIn(out('sar-big'));
  say(
    line(
      `sar offline ${BIG_CRN}`,
      big,
      `  ${big.disclosures} disclosures  answer ${sizeText(big.bytes)}  (peak rss / answer ${(big.maxRssMiB / (big.bytes / MIB)).toFixed(2)})`,
    ),
  );

  // (a, c) Through serve.
  const served = await throughServe({ trail, fixtures, servers, rounds: settings.rounds });
  const servedLine = (label, m, extra) =>
    `${label.padEnd(30)} wall ${String(m.wallMs).padStart(6)} ms (first byte ${m.ttfbMs} ms)  server cpu ${String(m.serverCpuMs).padStart(6)} ms  status ${m.status}${m.complete ? '' : ' (transfer broken off)'}${extra}`;
  for (const s of served) {
    say(
      servedLine(
        `sar serve ${TARGET_CRN} ${s.name}`,
        s.target,
        `${s.target.status === 200 ? `  ${s.target.disclosures} disclosures` : ''}  (median of ${s.targetRuns.length}; serve started in ${s.startMs} ms; ${s.checkpointsSigned} checkpoints signed over ${s.requests} SARs)`,
      ),
    );
    if (s.big)
      say(
        servedLine(
          `sar serve ${BIG_CRN} ${s.name}`,
          s.big,
          `  answer ${sizeText(s.big.bytes)}  server peak rss ${s.big.peakRssBeforeMiB} -> ${s.big.peakRssAfterMiB} MiB`,
        ),
      );
  }
  const load = loadavg().map((l) => l.toFixed(2));
  say(
    `load average at the end: ${load.join(' ')} on ${availableParallelism()} cpus (wall times stretch when other work shares them; cpu times less)`,
  );
  return {
    scenario: 'subject-access',
    trail: {
      records,
      archived: records - held,
      held,
      cache: trail.dir,
      generated: meta.generated,
      archive: meta.archive,
      targetCrn: TARGET_CRN,
      bigCrn: BIG_CRN,
    },
    sar,
    sarRuns,
    windowed,
    fullScan,
    ratios,
    big,
    served,
    loadAverage: load,
    ratio: null,
  };
}

/**
 * `GET /subject-access-request` of `serve` on a copy of the store (serve appends its own
 * records to it), the archive read-only (AUDIT_ARCHIVE_DIR), a client onboarded with the SAR's
 * permission alone: at the request deadline `serve` runs with by default (5 s), then at the
 * largest it takes (60 s), where the 20,000-record crn is asked for too.
 */
async function throughServe({ trail, fixtures, servers, rounds }) {
  const { dir, pki, caseRead } = fixtures;
  const access = `sqlite:${join(dir, 'access-sar.db')}`;
  await caseRead(['pki', 'client', 'sar-client', '--dir', pki]);
  await caseRead([
    'clients',
    'add',
    'sar-client',
    '--access-store',
    access,
    '--permissions',
    'getSubjectAccessRequest',
  ]);
  const [apiKey] = await caseRead(['keys', 'issue', 'sar-client', '--access-store', access]);
  const tls = {
    ca: readFileSync(join(pki, 'ca.pem')),
    cert: readFileSync(join(pki, 'sar-client.pem')),
    key: readFileSync(join(pki, 'sar-client-key.pem')),
  };
  // Client certificate and API key, no bearer token (decisions §22).
  const headers = { 'x-api-key': apiKey };

  const serveWith = async (name, overrides, askBig) => {
    const store = join(dir, `audit-sar-${name}.db`);
    copyFileSync(trail.storePath, store);
    const checkpointsBefore = (
      await caseRead(['audit', 'checkpoints', '--json', '--audit-store', `sqlite:${store}`])
    ).length;
    const started = performance.now();
    const { child, port } = await servers.startService(fixtures.cases, {
      ACCESS_STORE: access,
      AUDIT_STORE: `sqlite:${store}`,
      AUDIT_ARCHIVE_DIR: trail.archive,
      ...trail.env,
      ...overrides,
    });
    const startMs = Math.round(performance.now() - started);
    try {
      const once = async (crn, keep) => {
        const cpuBefore = cpuMsOf(child.pid);
        const peakRssBeforeMiB = peakRssMiB(child.pid);
        const answer = await get({ port, path: `/subject-access-request?crn=${crn}`, headers, tls, keep });
        const measured = {
          status: answer.status,
          complete: answer.complete,
          wallMs: answer.wallMs,
          ttfbMs: answer.ttfbMs,
          bytes: answer.bytes,
          serverCpuMs: cpuMsOf(child.pid) - cpuBefore,
          peakRssBeforeMiB,
          peakRssAfterMiB: peakRssMiB(child.pid),
        };
        if (keep && answer.status === 200)
          measured.disclosures = JSON.parse(answer.body).content.disclosures.length;
        return measured;
      };
      // A first request warms serve (and signs the checkpoint its own audit record then needs).
      const warmUp = await once(TARGET_CRN, false);
      const targetRuns = [];
      for (let r = 0; r < rounds; r++) targetRuns.push(await once(TARGET_CRN, true));
      const target = targetRuns.find((m) => m.wallMs === median(targetRuns.map((x) => x.wallMs)));
      const big = askBig ? await once(BIG_CRN, false) : undefined;
      await stop(child);
      // What serve signed: a SAR that finds a record newer than the newest checkpoint (the
      // previous SAR's own, say) signs one and reads its list again; one more at shutdown.
      const checkpointsAfter = (
        await caseRead(['audit', 'checkpoints', '--json', '--audit-store', `sqlite:${store}`])
      ).length;
      return {
        name,
        overrides,
        startMs,
        warmUp,
        targetRuns,
        target,
        big,
        requests: 1 + rounds + (askBig ? 1 : 0),
        checkpointsSigned: checkpointsAfter - checkpointsBefore,
      };
    } finally {
      await stop(child);
    }
  };
  return [
    await serveWith('deadline-5s', {}, false),
    await serveWith('deadline-60s', { REQUEST_DEADLINE_MS: '60000' }, true),
  ];
}
