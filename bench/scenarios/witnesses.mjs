// witnesses: what witnessed checkpoints cost the request path (decisions §19). `GET
// /case/X123456` (keep-alive) against the service signing a checkpoint every 100 records
// without a witness policy, and with AUDIT_WITNESS_POLICY naming two witnesses: a real
// `case-read witness serve` and a stand-in that accepts and never answers (every call to it
// waits out AUDIT_WITNESS_TIMEOUT_MS), alternating, with the server's CPU time per request and
// the checkpoints each trail had cosigned.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT } from '../lib/paths.mjs';
import { startProcess, stop } from '../lib/processes.mjs';
import { fmt } from '../lib/report.mjs';

/** A listener that accepts connections and never answers. */
function hanging() {
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => {
          for (const socket of sockets) socket.destroy();
          server.close();
        },
      }),
    ),
  );
}

export async function witnesses({ fixtures, servers, alternate }) {
  const { dir, caseRead } = fixtures;
  const keyDir = join(dir, 'audit-key-witnesses');
  await caseRead(['audit', 'keygen', '--dir', keyDir]);
  const origin = 'case-read.bench.example/audit';
  const key = {
    AUDIT_SIGNING_KEY: join(keyDir, 'audit-signing-key.pem'),
    AUDIT_ORIGIN: origin,
    AUDIT_CHECKPOINT_RECORDS: '100',
  };
  const logVkey = (
    await caseRead([
      'audit',
      'vkey',
      '--public-key',
      join(keyDir, 'audit-signing-key.pub.pem'),
      '--origin',
      origin,
    ])
  )
    .join('\n')
    .trim();
  const witnessDir = join(dir, 'witness');
  const vkey = (
    await caseRead(['witness', 'keygen', '--name', 'witness.bench.example/w1', '--dir', witnessDir])
  ).at(-1);
  writeFileSync(join(witnessDir, 'logs'), `log ${logVkey}\n`);
  const witness = await startProcess(
    process.execPath,
    [join(ROOT, 'bin/case-read.js'), 'witness', 'serve'],
    {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      WITNESS_KEY: join(witnessDir, 'witness-key'),
      WITNESS_LOGS: join(witnessDir, 'logs'),
      WITNESS_STORE: `sqlite:${join(witnessDir, 'witness.db')}`,
    },
    (out) => out.match(/"url":"http:\/\/127\.0\.0\.1:(\d+)"/)?.[1],
  );
  const stalled = await hanging();
  const hangingVkey = (
    await caseRead([
      'witness',
      'keygen',
      '--name',
      'witness.bench.example/w2',
      '--dir',
      join(dir, 'witness-2'),
    ])
  ).at(-1);
  const policy = join(dir, 'witness-policy');
  writeFileSync(
    policy,
    [
      `log ${logVkey}`,
      `witness w1 ${vkey} http://127.0.0.1:${witness.port}`,
      `witness w2 ${hangingVkey} ${stalled.url}`,
      'group any any w1 w2',
      'quorum any',
      '',
    ].join('\n'),
  );
  const trail = (name) => `sqlite:${join(dir, `audit-witnesses-${name}.db`)}`;
  const services = [];
  let stopped = false;
  try {
    for (const [name, extra] of [
      ['no-policy', key],
      ['policy', { ...key, AUDIT_WITNESS_POLICY: policy }],
    ]) {
      const started = await servers.startService(fixtures.cases, { ...extra, AUDIT_STORE: trail(name) });
      services.push({ name, ...started });
    }
    const targets = services.map((s) => ({ name: s.name, port: s.port, child: s.child, headers: s.headers }));
    const { rounds, totals } = await alternate(targets, (t) => ({
      port: t.port,
      path: '/case/X123456',
      headers: t.headers ?? fixtures.auth,
    }));
    for (const s of services) await stop(s.child);
    stopped = true;
    const cpuRatio =
      Math.round((totals.policy.cpuUsPerRequest / totals['no-policy'].cpuUsPerRequest) * 100) / 100;
    // One checkpoint a line.
    const listed = (await caseRead(['audit', 'checkpoints', '--json', '--audit-store', trail('policy')])).map(
      (line) => JSON.parse(line),
    );
    const cosigned = {
      checkpoints: listed.length,
      cosigned: listed.filter((c) => (c.cosignatures ?? []).length > 0).length,
    };
    process.stdout.write(
      `${targets.map((t) => fmt(t.name, totals[t.name])).join('\n')}\ncpu per request policy/no-policy ${cpuRatio}\ncheckpoints of the policy trail, and those cosigned: ${JSON.stringify(cosigned)}\n`,
    );
    return { scenario: 'witnesses', rounds, totals, cpuRatio, cosigned, ratio: null };
  } finally {
    if (!stopped) for (const s of services) await stop(s.child);
    await stop(witness.child);
    stalled.close();
  }
}
