// subject-access: what a subject access request costs on a long trail (decisions §22, §23). A
// trail of --records N (default 10,000,000; 20,000 under --smoke) of which --archived M
// (default 9,000,000; 15,000 under --smoke) were archived by `case-read audit archive` and let
// go of by the store, made once and cached (bench/lib/sar-trail.mjs says where; a smoke run's is
// not kept). One crn has 200 records spread over the whole trail (most of them archived),
// another --disclosures D (default 20,000, at most a tenth of the trail). Measured, each as a
// process of its own (wall time, CPU time, peak RSS) or against `serve`:
//   - the 200-record crn's SAR: `case-read subject-access --crn X --archive DIR --vkey V`, over
//     the whole trail and over a window of three months;
//   - the full scan before: `audit query --crn X --archive DIR` plus `audit query --crn X` on the
//     store, which read every archived record;
//   - the big crn's SAR offline: its peak RSS against the answer's size;
//   - through `serve`'s SAR door (SAR_PORT) with default settings, as the SAR service calls it
//     (a bearer token, no client certificate): the 200-record crn (time, time to first byte,
//     the server's CPU time) and the big crn (the same, the answer's bytes, serve's resident
//     memory before and at its peak during the answer), the big answer then checked by `case-read
//     subject-access verify`. The SAR service allows 60 s and 100 MB (decisions §23).
// Speed is judged by reading the output, never asserted here.
import { spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
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

/** Resident memory now (VmRSS), in MiB. */
const rssMiB = (pid) =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024);
/** Anonymous and file-backed resident memory, in MiB. */
const rssParts = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { anon: Math.round(kib('RssAnon') / 1024), file: Math.round(kib('RssFile') / 1024) };
};
/** Samples the resident memory's parts every 100 ms until stopped: where the peak is (the heap, or pages of files mapped). */
function sampleRss(pid) {
  const before = rssParts(pid);
  const peak = { ...before };
  let firstByte;
  const timer = setInterval(() => {
    const now = rssParts(pid);
    peak.anon = Math.max(peak.anon, now.anon);
    peak.file = Math.max(peak.file, now.file);
  }, 100);
  return {
    /** The answer began: the peak so far is the first pass's. */
    answered: () => {
      firstByte ??= { ...peak };
    },
    stop: () => {
      clearInterval(timer);
      return {
        anonBeforeMiB: before.anon,
        anonFirstPassPeakMiB: firstByte?.anon,
        anonPeakMiB: peak.anon,
        fileBeforeMiB: before.file,
        filePeakMiB: peak.file,
      };
    },
  };
}
/** Starts the peak (VmHWM) again from the resident memory now (Linux: 5 to clear_refs). */
const resetPeakRss = (pid) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** One `GET path`: status, time to first byte, total time, bytes, and the body written to `saveTo` when given. */
function get({ port, path, headers, tls, saveTo, answered }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      { host: '127.0.0.1', port, path, servername: 'localhost', headers, agent: false, ...tls },
      (res) => {
        const ttfbMs = Math.round(performance.now() - started);
        answered?.();
        let bytes = 0;
        const file = saveTo === undefined ? undefined : openSync(saveTo, 'w');
        res.on('data', (c) => {
          bytes += c.length;
          if (file !== undefined) writeSync(file, c);
        });
        const done = () => {
          if (file !== undefined) closeSync(file);
          resolve({
            status: res.statusCode,
            ttfbMs,
            wallMs: Math.round(performance.now() - started),
            bytes,
            complete: res.complete,
          });
        };
        res.on('error', done);
        res.on('aborted', done);
        res.on('end', done);
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
  const bigCount = options.sarDisclosures ?? Math.min(20_000, Math.floor(records / 10));
  if (bigCount + targetCount > records) {
    throw new Error(`subject-access: --disclosures ${bigCount} do not fit a trail of ${records} records`);
  }
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
  if (options.sarDoorOnly) {
    const served = await throughServe({ trail, fixtures, servers, rounds: settings.rounds });
    reportServed(served);
    return { scenario: 'subject-access', trail: { records, cache: trail.dir }, served, ratio: null };
  }
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

  // (a, c) Through serve, at the SAR service's door with serve's default settings.
  const served = await throughServe({ trail, fixtures, servers, rounds: settings.rounds });
  reportServed(served);
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

/** The door's lines: the target crn's median, and the big crn's answer and serve's memory. */
function reportServed(served) {
  const servedLine = (label, m, extra) =>
    `${label.padEnd(30)} wall ${String(m.wallMs).padStart(6)} ms (first byte ${m.ttfbMs} ms)  server cpu ${String(m.serverCpuMs).padStart(6)} ms  status ${m.status}${m.complete ? '' : ' (transfer broken off)'}${extra}`;
  say(
    servedLine(
      `sar door ${TARGET_CRN}`,
      served.target,
      `  ${served.target.disclosures} disclosures  (median of ${served.targetRuns.length}; serve started in ${served.startMs} ms)`,
    ),
  );
  const { big } = served;
  say(
    servedLine(
      `sar door ${BIG_CRN}`,
      big,
      `  ${big.disclosures ?? '?'} disclosures  answer ${sizeText(big.bytes)} (${big.bytes} bytes)${big.verified ? `  verified by subject-access verify in ${big.verified.wallMs} ms` : '  NOT VERIFIED'}`,
    ),
  );
  say(
    `${''.padEnd(30)} server rss ${big.rssBeforeMiB} MiB -> peak ${big.peakRssMiB} MiB (+${big.peakRssMiB - big.rssBeforeMiB}); sampled peaks: anonymous ${big.sampled.anonBeforeMiB} -> ${big.sampled.anonFirstPassPeakMiB} MiB (to the first byte) -> ${big.sampled.anonPeakMiB} MiB, files ${big.sampled.fileBeforeMiB} -> ${big.sampled.filePeakMiB} MiB`,
  );
}

/**
 * `GET /subject-access-request` of `serve` on a copy of the store (serve appends its own
 * records to it), the archive read-only (AUDIT_ARCHIVE_DIR), through the SAR service's door
 * (SAR_PORT, decisions §23) as the SAR service calls it: a bearer token of a key set file, no
 * client certificate, and serve's default settings otherwise. The target crn `rounds` times,
 * then the big crn once: its answer saved and checked by `case-read subject-access verify`,
 * and serve's resident memory before it and at its peak during it (the peak reset first,
 * /proc/PID/clear_refs).
 */
async function throughServe({ trail, fixtures, servers, rounds }) {
  const { dir, pki } = fixtures;
  const { generateKeyPair, exportJWK, SignJWT } = await import('jose');
  const issuer = 'https://auth.bench.invalid/';
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwks = join(dir, 'sar-jwks.json');
  writeFileSync(
    jwks,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256' }] }),
  );
  const token = await new SignJWT({
    authorities: ['ROLE_SAR_DATA_ACCESS'],
    client_id: 'sar-bench',
    scope: 'read',
  })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
    .setIssuer(issuer)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
  const tls = { ca: readFileSync(join(pki, 'ca.pem')) };
  const headers = { authorization: `Bearer ${token}` };
  const sarPort = (out) => {
    const line = out.split('\n').find((l) => l.includes('"listening"'));
    const ready = line ? JSON.parse(line) : undefined;
    return ready?.sarUrl ? new URL(ready.sarUrl).port : undefined;
  };

  const store = join(dir, 'audit-sar.db');
  copyFileSync(trail.storePath, store);
  const started = performance.now();
  const { child, port } = await servers.startService(
    fixtures.cases,
    {
      AUDIT_STORE: `sqlite:${store}`,
      AUDIT_ARCHIVE_DIR: trail.archive,
      SAR_PORT: '0',
      SAR_AUTH_JWKS: jwks,
      SAR_AUTH_ISSUER: issuer,
      ...trail.env,
    },
    undefined,
    sarPort,
  );
  const startMs = Math.round(performance.now() - started);
  try {
    const once = async (crn, saveTo) => {
      const cpuBefore = cpuMsOf(child.pid);
      const rssBeforeMiB = rssMiB(child.pid);
      resetPeakRss(child.pid);
      const sampled = sampleRss(child.pid);
      const answer = await get({
        port,
        path: `/subject-access-request?crn=${crn}`,
        headers,
        tls,
        saveTo,
        answered: sampled.answered,
      });
      return {
        status: answer.status,
        complete: answer.complete,
        wallMs: answer.wallMs,
        ttfbMs: answer.ttfbMs,
        bytes: answer.bytes,
        serverCpuMs: cpuMsOf(child.pid) - cpuBefore,
        rssBeforeMiB,
        peakRssMiB: peakRssMiB(child.pid),
        sampled: sampled.stop(),
      };
    };
    // A first request warms serve (and signs the checkpoint its own audit record then needs).
    const warmUp = await once(TARGET_CRN);
    const targetRuns = [];
    for (let r = 0; r < rounds; r++) targetRuns.push(await once(TARGET_CRN, join(dir, 'sar-target.json')));
    const target = targetRuns.find((m) => m.wallMs === median(targetRuns.map((x) => x.wallMs)));
    target.disclosures = disclosuresIn(join(dir, 'sar-target.json'));
    const bigFile = join(dir, 'sar-big-served.json');
    const big = await once(BIG_CRN, bigFile);
    if (big.status === 200 && big.complete) {
      big.disclosures = disclosuresIn(bigFile);
      const verified = await timed(
        ['subject-access', 'verify', bigFile, '--vkey', trail.vkeyFile],
        join(dir, 'sar-verify.out'),
      );
      big.verified = { wallMs: verified.wallMs, cpuMs: verified.cpuMs, maxRssMiB: verified.maxRssMiB };
    }
    return { name: 'door', startMs, warmUp, targetRuns, target, big, requests: 2 + rounds };
  } finally {
    await stop(child);
  }
}
