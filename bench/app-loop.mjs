#!/usr/bin/env node
import { execFile } from 'node:child_process';
// node bench/app-loop.mjs [--requests N] [--audit sqlite|jsonl] [--checkpoints] [--archive-every S] [--cpu-prof]
//                         [--dist DIR]
//
// --dist DIR: the service as built in DIR (another checkout's dist, the commit before, say)
// instead of this checkout's; see bench/app-loop-pairs.mjs.
// --archive-every S (with --checkpoints, SQLite): `case-read audit archive --older-than 0`
// in another process every S seconds while the rounds run, as the CronJob would (decisions
// §15): what archiving beside it costs this process's requests (lock waits, vacuum steps).
// --checkpoints: with AUDIT_SIGNING_KEY set, as in production: a signed checkpoint every
// 1000 records, the audit tree grown before each (decisions §14), in the same process.
// The service's own cost per request, without TLS or sockets: the full app as `serve`
// builds it (perimeter with key, client, revocations, rate limit and bearer; permission;
// SQLite case read; audit record (SQLite, or JSONL with --audit jsonl); metrics; access log
// to a discarded stream), driven in-process through @hono/node-server's request listener
// with Node's own IncomingMessage and ServerResponse, 16 requests in flight, each on a
// socket stand-in carrying the bench client's verified certificate. Prints CPU µs per
// request for three rounds. Far less noisy than the socket benchmarks, so it is the one to
// judge a change to the service's own code by; it says nothing about TLS or the parser.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Duplex } from 'node:stream';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const requests = Number(args[args.indexOf('--requests') + 1]) || 20_000;
const auditKind = args.includes('--audit') ? args[args.indexOf('--audit') + 1] : 'sqlite';
if (!['sqlite', 'jsonl'].includes(auditKind)) throw new Error('--audit takes sqlite or jsonl');
const distDir = args.includes('--dist')
  ? pathToFileURL(`${resolve(args[args.indexOf('--dist') + 1])}/`)
  : new URL('../dist/', import.meta.url);
const dist = (path) => new URL(path, distDir).href;
const { main: cli } = await import(dist('app/cli.js'));
const { buildService, loadServiceConfig: loadConfig } = await import(dist('app/composition/service.js'));
const { pino } = await import('pino');
const { getRequestListener } = await import('@hono/node-server');

const dir = mkdtempSync(join(tmpdir(), 'case-read-app-loop-'));
const lines = [];
const io = { out: (l) => lines.push(l), err: () => {}, env: {}, stderrIsTty: false };
const run = async (argv) => {
  lines.length = 0;
  if ((await cli(argv, io)) !== 0) throw new Error(`case-read ${argv.join(' ')} failed`);
  return lines.slice();
};
const pki = join(dir, 'pki');
const access = `sqlite:${join(dir, 'access.db')}`;
await run(['pki', 'init', '--dir', pki]);
await run(['pki', 'client', 'bench-client', '--dir', pki]);
await run([
  'cases',
  'import',
  new URL('../fixtures/cases.json', import.meta.url).pathname,
  '--store',
  `sqlite:${join(dir, 'cases.db')}`,
]);
await run(['clients', 'add', 'bench-client', '--access-store', access, '--permissions', 'getCase']);
const [apiKey] = await run(['keys', 'issue', 'bench-client', '--access-store', access]);
const [token] = await run(['tokens', 'mint', '--client', 'bench-client', '--dir', pki, '--expires-in', '2h']);

const signing = args.includes('--checkpoints') ? join(dir, 'audit-keys') : undefined;
if (signing) await run(['audit', 'keygen', '--dir', signing]);
const config = loadConfig({
  ...(signing ? { AUDIT_SIGNING_KEY: join(signing, 'audit-signing-key.pem') } : {}),
  TLS_CERT: join(pki, 'server.pem'),
  TLS_KEY: join(pki, 'server-key.pem'),
  TLS_CLIENT_CA: join(pki, 'ca.pem'),
  CASE_STORE: `sqlite:${join(dir, 'cases.db')}`,
  ACCESS_STORE: access,
  AUDIT_STORE:
    auditKind === 'jsonl' ? `jsonl:${join(dir, 'audit.jsonl')}` : `sqlite:${join(dir, 'audit.db')}`,
  BEARER_JWKS: join(pki, 'jwks.json'),
  BEARER_ISSUER: 'urn:case-read:dev-issuer',
  BEARER_AUDIENCE: 'case-read-service',
  CREDENTIALS_ISSUER: 'local',
  RATE_LIMIT_DEFAULT: '100000000/1s',
});
// The access log as `serve` writes it (JSON lines through an async buffer), to /dev/null.
const logger = pino(
  { level: process.env.APPLOOP_LEVEL ?? 'info' },
  pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }),
);
const service = await buildService(config, logger);

const cert = new X509Certificate(readFileSync(join(pki, 'bench-client.pem')));
const peer = {
  subject: { CN: 'bench-client' },
  raw: cert.raw,
  serialNumber: cert.serialNumber,
  valid_to: cert.validTo,
};
// Each request goes through @hono/node-server's own listener, as under `serve`, with Node's
// own IncomingMessage and ServerResponse on a socket stand-in that carries the verified
// certificate and discards what is written. One stand-in per request in flight.
const listener = getRequestListener(service.app.fetch);
const rawHeaders = ['host', 'localhost', 'x-api-key', apiKey, 'authorization', `Bearer ${token}`];
const parsedHeaders = { host: 'localhost', 'x-api-key': apiKey, authorization: `Bearer ${token}` };
function socketStandIn() {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
    writev(_chunks, done) {
      done();
    },
  });
  socket.authorized = true;
  socket.getPeerCertificate = () => peer;
  socket.encrypted = true;
  return socket;
}
const once = (socket) =>
  new Promise((resolve, reject) => {
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = '/case/X123456';
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = '1.1';
    req.headers = { ...parsedHeaders };
    req.rawHeaders = rawHeaders.slice();
    req.complete = true;
    req.push(null);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = true;
    res.assignSocket(socket);
    res.on('finish', () => {
      res.detachSocket(socket);
      if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}`));
      else resolve();
    });
    listener(req, res);
  });
async function round(n) {
  let next = 0;
  const started = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      const socket = socketStandIn();
      while (next++ < n) await once(socket);
    }),
  );
  const used = process.cpuUsage(started);
  return (used.user + used.system) / n;
}
const archiveEvery = args.includes('--archive-every') ? Number(args[args.indexOf('--archive-every') + 1]) : 0;
let archiving;
let archives = 0;
if (archiveEvery > 0) {
  if (!signing || auditKind !== 'sqlite')
    throw new Error('--archive-every needs --checkpoints and the SQLite audit store');
  const bin = new URL('../bin/case-read.js', import.meta.url).pathname;
  const argv = [
    bin,
    'audit',
    'archive',
    '--to',
    join(dir, 'archive'),
    '--older-than',
    '0',
    '--audit-store',
    `sqlite:${join(dir, 'audit.db')}`,
  ];
  const env = { PATH: process.env.PATH, AUDIT_SIGNING_KEY: join(signing, 'audit-signing-key.pem') };
  // One at a time, as the CronJob's concurrencyPolicy: Forbid keeps it.
  let running;
  archiving = setInterval(() => {
    if (running) return;
    running = new Promise((resolve) =>
      execFile(process.execPath, argv, { env }, (error, _out, stderr) => {
        // Nothing covered by a checkpoint yet is not a failure; anything else is.
        if (error && !/no checkpoint/.test(stderr)) process.stderr.write(stderr);
        else archives++;
        running = undefined;
        resolve();
      }),
    );
  }, archiveEvery * 1000);
  archiving.done = () => running;
}
try {
  await round(2000);
  for (let r = 1; r <= 3; r++)
    process.stdout.write(`round ${r}: ${(await round(requests)).toFixed(1)} µs/req\n`);
  if (archiving) process.stdout.write(`archives run beside: ${archives}\n`);
} finally {
  if (archiving) {
    clearInterval(archiving);
    await archiving.done();
  }
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
