// Alternating rounds (A B C A B C ...) of the same load on several servers, each measured for
// throughput, latency, resident memory, the server's CPU time per request (from /proc) and
// the load generator's own CPU; then their means.
import { readFileSync } from 'node:fs';
import { load } from './load.mjs';
import { fmt } from './report.mjs';

/** Resident memory of the process, in MiB (one decimal), from /proc/PID/status; null if gone. */
const rssMiB = (pid) => {
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return Math.round((kb / 1024) * 10) / 10;
  } catch {
    return null;
  }
};
/** CPU time (user + system) the process has used, in milliseconds, from /proc/PID/stat. */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks at 100 Hz
};
const summarise = (result, pid, cpu) => ({
  reqPerSec: Math.round(result.requests.average),
  ...(cpu ? { cpuUsPerRequest: Math.round((cpu.ms * 1000) / Math.max(1, cpu.requests)) } : {}),
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  rssMiB: rssMiB(pid),
});
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Each server's rounds, summed up: means, the largest RSS, the non-2xx and errors added. */
const totalsOf = (rounds) =>
  Object.fromEntries(
    Object.entries(rounds).map(([name, rs]) => [
      name,
      {
        reqPerSec: Math.round(mean(rs.map((s) => s.reqPerSec))),
        p50: Math.round(mean(rs.map((s) => s.p50)) * 10) / 10,
        p99: Math.round(mean(rs.map((s) => s.p99)) * 10) / 10,
        rssMiB: Math.max(...rs.map((s) => s.rssMiB ?? 0)),
        cpuUsPerRequest: Math.round(mean(rs.map((s) => s.cpuUsPerRequest ?? 0))),
        generatorCpu: Math.round(mean(rs.map((s) => s.generatorCpu ?? 0)) * 100) / 100,
        non2xx: rs.reduce((a, s) => a + s.non2xx, 0),
        errors: rs.reduce((a, s) => a + s.errors, 0),
      },
    ]),
  );

/**
 * alternate(targets, request, connections?) for the run's `settings`, with the client
 * certificate `tls`. Each target is { name, port, child, ... }; request(target) gives the
 * load's { port, path, method?, headers, reconnect? }. A warm-up for each, then
 * settings.rounds rounds, each target in turn, a `round N` line printed for each; resolves to
 * { rounds: { NAME: [summary...] }, totals: { NAME: summary } }.
 */
export function createAlternate({ settings, tls }) {
  return async function alternate(targets, request, connectionsOverride) {
    const rounds = Object.fromEntries(targets.map((t) => [t.name, []]));
    const connections =
      connectionsOverride ??
      (request(targets[0]).reconnect ? settings.handshakeConnections : settings.connections);
    for (const t of targets) await load({ ...request(t), durationS: settings.warmupS, connections, tls });
    for (let r = 1; r <= settings.rounds; r++) {
      for (const t of targets) {
        const before = cpuMs(t.child.pid);
        const generatorBefore = process.cpuUsage();
        const started = performance.now();
        const result = await load({ ...request(t), durationS: settings.durationS, connections, tls });
        const generator = process.cpuUsage(generatorBefore);
        const requests = result.requests.total ?? Math.round(result.requests.average * settings.durationS);
        const s = {
          ...summarise(result, t.child.pid, { ms: cpuMs(t.child.pid) - before, requests }),
          // The load generator's own CPU over the window, as a share of one core.
          generatorCpu:
            Math.round(((generator.user + generator.system) / 1000 / (performance.now() - started)) * 100) /
            100,
        };
        rounds[t.name].push(s);
        process.stdout.write(`round ${r} ${fmt(t.name, s)}\n`);
      }
    }
    return { rounds, totals: totalsOf(rounds) };
  };
}
