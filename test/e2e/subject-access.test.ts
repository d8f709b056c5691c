import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaseRead, caseOperation, casePath } from '../../src/domain/case-operations.js';
import { prepareServe, ROOT, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { goBuild, skipWithoutGoReference } from '../support/go-reference.js';
import { consumerAgent, httpsRequest } from '../support/https-client.js';

/**
 * The subject access request of decisions §22 against a real `serve`: four reads of one crn by
 * two clients and one of another are exactly the four listed, the answer (each entry, and the
 * checkpoint and tree hashes that prove them all, ADR 27) accepted by `case-read subject-access
 * verify` and by Go's sumdb/tlog (examples/subject-access-verify: tlog.ProveRecord and
 * CheckRecord), and refused by both with one hash changed; 204, 209, the 400s, the window, 403
 * without the permission, the template; then, once `audit archive` let the store go of most
 * records, the same answer from the archive, and a 503 (never a shorter 200) with the archive
 * unreadable.
 */

const ORIGIN = 'case-read.test.example/audit';
const CRN = 'X123456';

/**
 * The reads the first test makes, in order: four of CRN by two clients, and one of another
 * crn. client-a is the setup's client (every case read); client-b holds the reads it makes
 * here and no other.
 */
const READS: readonly {
  readonly by: 'client-a' | 'client-b';
  readonly id: CaseRead;
  readonly crn: string;
}[] = [
  { by: 'client-a', id: 'getCase', crn: CRN },
  { by: 'client-b', id: 'getHomeOfficeInterest', crn: CRN },
  { by: 'client-a', id: 'getCase', crn: 'A000001' },
  { by: 'client-a', id: 'getCase', crn: CRN },
  { by: 'client-b', id: 'getCommunityManagerByCrn', crn: CRN },
];
/** The reads of CRN: what its subject access answer lists. */
const READS_OF_CRN = READS.filter((read) => read.crn === CRN);

const dir = mkdtempSync(join(tmpdir(), 'case-read-sar-e2e-'));
const archive = join(dir, 'archive');
let setup: ServeSetup;
let env: Record<string, string>;
let vkeyFile: string;
let server: Awaited<ReturnType<typeof startServe>>;

interface Client {
  readonly cert: string;
  readonly key: string;
  readonly apiKey: string;
  /** A bearer token, for the case reads. */
  readonly token: string;
}
let clientB: Client;
let sar: Client;

/** A client with its certificate, key and API key, holding `permissions`. */
function onboard(name: string, permissions: string): Client {
  const paths = JSON.parse(setup.cli('pki', 'client', name, '--dir', join(dir, 'pki'), '--json')) as {
    cert: string;
    key: string;
  };
  setup.cli('clients', 'add', name, '--permissions', permissions);
  return {
    cert: readFileSync(paths.cert, 'utf8'),
    key: readFileSync(paths.key, 'utf8'),
    apiKey: setup.cli('keys', 'issue', name).trim(),
    token: setup.cli('tokens', 'mint', '--client', name, '--dir', join(dir, 'pki')).trim(),
  };
}

const url = (path: string) => `${server.url.replace('127.0.0.1', 'localhost')}${path}`;

/** A GET as `client` (the setup's own client when none: with its bearer token). */
function get(path: string, client?: Client) {
  return httpsRequest(url(path), {
    ca: setup.ca,
    cert: client?.cert ?? setup.client.cert,
    key: client?.key ?? setup.client.key,
    headers: {
      'x-api-key': client?.apiKey ?? setup.apiKey,
      authorization: `Bearer ${client?.token ?? setup.token}`,
    },
  });
}

interface Disclosure {
  time: string;
  requestId: string;
  operation: string;
  recipient: string;
  onBehalfOf: string | null;
  status: number;
  index: number;
  entry: string;
}
interface Content {
  crn: string;
  case?: { personalDetails: unknown } | null;
  disclosures: Disclosure[];
  /** The checkpoint and the tree's hashes that prove every disclosure; there when there are disclosures. */
  proof?: { checkpoint: string; hashes: string };
}

async function subjectAccess(query: string): Promise<{ status: number; content?: Content; text: string }> {
  const res = await get(`/subject-access-request?${query}`, sar);
  return {
    status: res.status,
    text: res.text,
    ...(res.status === 200 ? { content: (JSON.parse(res.text) as { content: Content }).content } : {}),
  };
}

let saved = 0;
/** The answer's text saved to a file of its own. */
function save(text: string): string {
  const file = join(dir, `answer-${++saved}.json`);
  writeFileSync(file, text);
  return file;
}

/** `case-read subject-access verify` on the answer's text, with the log's verifier key. */
const caseReadVerifies = (text: string) =>
  runCli(['subject-access', 'verify', save(text), '--vkey', vkeyFile], env);

let goVerifier: string | undefined;
/** The Go example (examples/subject-access-verify: sumdb/note and sumdb/tlog alone), compiled once, on the answer's text. */
function goVerifies(text: string) {
  goVerifier ??= goBuild('examples/subject-access-verify/main.go', join(dir, 'subject-access-verify'));
  const result = spawnSync(goVerifier, [save(text), vkeyFile], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The answer's text with one byte of one hash of its proof changed. */
function oneHashChanged(text: string): string {
  const answer = JSON.parse(text) as { content: Content };
  const proof = answer.content.proof as { checkpoint: string; hashes: string };
  const hashes = Buffer.from(proof.hashes, 'base64');
  hashes[3] = (hashes[3] ?? 0) ^ 1;
  return JSON.stringify({
    content: { ...answer.content, proof: { ...proof, hashes: hashes.toString('base64') } },
  });
}

/** Resolves once serve has logged a line holding `text` (its log is written asynchronously); rejects after 20 s. */
function logged(text: string): Promise<void> {
  if (server.output().includes(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve never logged ${text}`)), 20_000);
    const onData = () => {
      if (!server.output().includes(text)) return;
      clearTimeout(timer);
      server.child.stdout?.off('data', onData);
      resolve();
    };
    server.child.stdout?.on('data', onData);
  });
}

const readIds: string[] = [];
/** The first answer's text, as served. */
let firstAnswer = '';

beforeAll(async () => {
  setup = prepareServe(dir);
  setup.cli('audit', 'keygen', '--dir', join(dir, 'keys'));
  clientB = onboard(
    'client-b',
    [...new Set(READS.filter((read) => read.by === 'client-b').map((read) => read.id))].join(','),
  );
  sar = onboard('sar-service', 'getSubjectAccessRequest,getSubjectAccessRequestTemplate');
  mkdirSync(archive);
  env = {
    ...setup.env,
    AUDIT_SIGNING_KEY: join(dir, 'keys', 'audit-signing-key.pem'),
    AUDIT_ORIGIN: ORIGIN,
    AUDIT_CHECKPOINT_RECORDS: '100',
    AUDIT_ARCHIVE_DIR: archive,
    RATE_LIMIT_DEFAULT: '100000/1s',
  };
  vkeyFile = join(dir, 'audit.vkey');
  writeFileSync(vkeyFile, runCli(['audit', 'vkey'], env).stdout);
  server = await startServe(env);
}, 90_000);

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /subject-access-request against serve', () => {
  it('lists exactly the four reads of the crn by two clients, oldest first, not the read of another', async () => {
    for (const read of READS) {
      const res = await get(
        casePath(caseOperation(read.id), read.crn),
        read.by === 'client-b' ? clientB : undefined,
      );
      expect(res.status, `${read.by} ${read.id} ${read.crn}`).toBe(200);
      if (read.crn === CRN) readIds.push(res.headers['x-request-id'] as string);
    }

    const answer = await subjectAccess(`crn=${CRN}`);
    expect(answer.status, answer.text).toBe(200);
    const content = answer.content as Content;
    expect(content.crn).toBe(CRN);
    expect(content.case?.personalDetails).not.toBeNull();
    expect(content.disclosures.map((d) => d.requestId)).toEqual(readIds);
    expect(content.disclosures.map((d) => d.recipient)).toEqual(READS_OF_CRN.map((read) => read.by));
    expect(content.disclosures.map((d) => d.operation)).toEqual(READS_OF_CRN.map((read) => read.id));
    for (const d of content.disclosures) {
      expect(d.status).toBe(200);
      expect(d.onBehalfOf).toBeNull();
      // The entry is the record's exact text: its seq (index + 1), request id and crn are in it.
      const entry = Buffer.from(d.entry, 'base64').toString('utf8');
      expect(entry).toContain(d.requestId);
      expect(entry).toContain(CRN);
      expect(entry).toMatch(new RegExp(`^\\[4,${d.index + 1},`));
    }
    // Ascending index, each once: leaf indexes of the log.
    const indexes = content.disclosures.map((d) => d.index);
    expect(indexes).toEqual([...new Set(indexes)].sort((a, b) => a - b));
    // One proof of them all: the log's signed checkpoint, and the tree's hashes.
    expect(content.proof?.checkpoint.startsWith(`${ORIGIN}\n`)).toBe(true);
    expect(content.proof?.checkpoint).toContain(`\n\n— ${ORIGIN} `);
    expect(Buffer.from(content.proof?.hashes ?? '', 'base64').length % 32).toBe(0);
    expect(content.proof?.hashes.length).toBeGreaterThan(0);
    firstAnswer = answer.text;
  }, 60_000);

  it('case-read subject-access verify accepts the answer as served, and refuses it with one hash changed, naming a disclosure', () => {
    const size = Number(
      (JSON.parse(firstAnswer) as { content: Content }).content.proof?.checkpoint.split('\n')[1],
    );
    const accepted = caseReadVerifies(firstAnswer);
    expect(accepted.status, accepted.stderr).toBe(0);
    expect(accepted.stdout).toBe(
      `4 disclosure(s) of ${CRN} proved against the checkpoint of ${size} records of ${ORIGIN}, each shown as its entry says\n`,
    );
    const refused = caseReadVerifies(oneHashChanged(firstAnswer));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /^case-read: \S+: disclosure [1-4] of 4 \(index \d+, requestId "[^"]+"\) is not proved: /,
    );
  }, 60_000);

  it.skipIf(skipWithoutGoReference)(
    "Go's sumdb/tlog (examples/subject-access-verify) accepts the answer as served, and refuses it with one hash changed, naming the same disclosure",
    () => {
      const size = Number(
        (JSON.parse(firstAnswer) as { content: Content }).content.proof?.checkpoint.split('\n')[1],
      );
      const accepted = goVerifies(firstAnswer);
      expect(accepted.status, accepted.stderr).toBe(0);
      expect(accepted.stdout).toBe(
        `proved 4 disclosures of ${CRN} against the checkpoint of ${size} records of ${ORIGIN}\n`,
      );
      const changed = oneHashChanged(firstAnswer);
      const refused = goVerifies(changed);
      expect(refused.status).toBe(1);
      const named = /disclosure [1-4] of 4 \(index \d+, requestId "[^"]+"\) is not proved/.exec(
        refused.stderr,
      )?.[0];
      expect(named, refused.stderr).toBeDefined();
      expect(caseReadVerifies(changed).stderr).toContain(named);
    },
    180_000,
  );

  it('records the request itself like any read: the next answer lists it, to the SAR client', async () => {
    const again = await subjectAccess(`crn=${CRN}`);
    const disclosures = (again.content as Content).disclosures;
    expect(disclosures.slice(0, 4).map((d) => d.requestId)).toEqual(readIds);
    expect(disclosures).toHaveLength(5);
    expect(disclosures[4]).toMatchObject({
      operation: 'getSubjectAccessRequest',
      recipient: 'sar-service',
      status: 200,
    });
  }, 30_000);

  it('answers 204 when nothing is held about the crn, 209 for a prn alone', async () => {
    const none = await get('/subject-access-request?crn=Y999999', sar);
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
    const prn = await get('/subject-access-request?prn=A1234BC', sar);
    expect(prn.status).toBe(209);
    expect(prn.text).toBe('');
  });

  it.each([
    ['', 'crn'],
    ['crn=x1', 'crn'],
    [`crn=${CRN}&fromDate=2026-13-01`, 'fromDate'],
    [`crn=${CRN}&toDate=yesterday`, 'toDate'],
    [`crn=${CRN}&fromDate=2026-11-02&toDate=2026-11-01`, 'fromDate'],
  ])('answers 400 problem+json naming the parameter for %j', async (query, parameter) => {
    const res = await get(`/subject-access-request?${query}`, sar);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((res.json() as { detail: string }).detail).toContain(parameter);
  });

  it('keeps to the window: whole days in London, inclusive', async () => {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date());
    const inToday = await subjectAccess(`crn=${CRN}&fromDate=${today}&toDate=${today}`);
    expect((inToday.content as Content).disclosures.slice(0, 4).map((d) => d.requestId)).toEqual(readIds);
    const before = await subjectAccess(`crn=${CRN}&fromDate=2020-01-01&toDate=2020-12-31`);
    // The case is held whatever the window; no disclosure was made then.
    expect(before.status).toBe(200);
    expect((before.content as Content).disclosures).toEqual([]);
  });

  it('refuses a client without the permission (403), and serves the template, the same bytes', async () => {
    const refused = await get(`/subject-access-request?crn=${CRN}`);
    expect(refused.status).toBe(403);
    const template = await get('/subject-access-request/template', sar);
    expect(template.status).toBe(200);
    expect(template.headers['content-type']).toMatch(/^text\/plain/);
    expect(template.text).toBe(readFileSync(join(ROOT, 'templates/subject-access-request.mustache'), 'utf8'));
    expect((await get('/subject-access-request/template')).status).toBe(403);
  });

  it('after audit archive let the store go of most records, lists every record it listed before; 503 with the archive unreadable', async () => {
    const agent = consumerAgent({ maxSockets: 4 });
    const before = (await subjectAccess(`crn=${CRN}`)).content as Content;
    // Enough other reads for two whole tiles of 256 records, all covered by a checkpoint.
    for (let i = 0; i < 600; i++) {
      const res = await httpsRequest(url('/case/A000002'), {
        ca: setup.ca,
        ...setup.client,
        agent,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      });
      expect(res.status).toBe(200);
    }
    agent.destroy();
    // A checkpoint covers them once the next lands (every 100 records here).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const archived = runCli(
      [
        'audit',
        'archive',
        '--to',
        archive,
        '--before',
        new Date(Date.now() + 60_000).toISOString(),
        '--json',
      ],
      env,
    );
    expect(archived.status, archived.stderr).toBe(0);
    const report = JSON.parse(archived.stdout) as { to: number; forgotten?: { upTo: number } };
    expect(report.to).toBeGreaterThanOrEqual(512);
    expect(report.forgotten?.upTo).toBe(report.to);

    const after = await subjectAccess(`crn=${CRN}`);
    expect(after.status, after.text).toBe(200);
    const listed = (after.content as Content).disclosures;
    expect(listed.slice(0, before.disclosures.length).map((d) => d.requestId)).toEqual(
      before.disclosures.map((d) => d.requestId),
    );
    // Every disclosure is read from the archive now (the crn's records came before the 600 reads): proved all the same.
    expect(listed.every((d) => d.index < report.to)).toBe(true);
    expect(caseReadVerifies(after.text)).toMatchObject({ status: 0, stderr: '' });
    if (!skipWithoutGoReference) expect(goVerifies(after.text)).toMatchObject({ status: 0, stderr: '' });

    // The archive unreadable: 503 problem+json, never a shorter 200; the log says why.
    renameSync(archive, `${archive}.away`);
    const unreadable = await get(`/subject-access-request?crn=${CRN}`, sar);
    expect(unreadable.status).toBe(503);
    expect((unreadable.json() as { type: string }).type).toBe('urn:case-read:problem:trail-unavailable');
    await logged('the audit trail could not be read whole');
    renameSync(`${archive}.away`, archive);
    const back = await subjectAccess(`crn=${CRN}`);
    expect(back.status).toBe(200);
  }, 180_000);

  it('is reproduced offline by case-read subject-access from the store and the archive', async () => {
    // A000001: read once, early, so a checkpoint covers it (a record newer than the newest is refused offline).
    const offline = runCli(
      ['subject-access', '--crn', 'A000001', '--archive', archive, '--vkey', vkeyFile],
      env,
    );
    expect(offline.status, offline.stderr).toBe(0);
    const printed = (JSON.parse(offline.stdout) as { content: Content }).content;
    expect(printed.case).toBeUndefined();
    const served = (await subjectAccess('crn=A000001')).content as Content;
    expect(printed.disclosures.map((d) => [d.requestId, d.index, d.entry])).toEqual(
      served.disclosures.map((d) => [d.requestId, d.index, d.entry]),
    );
    expect(printed.proof?.checkpoint.startsWith(`${ORIGIN}\n`)).toBe(true);
    expect(caseReadVerifies(offline.stdout)).toMatchObject({ status: 0, stderr: '' });
    if (!skipWithoutGoReference) expect(goVerifies(offline.stdout)).toMatchObject({ status: 0, stderr: '' });
    const none = runCli(
      ['subject-access', '--crn', 'Y999998', '--archive', archive, '--vkey', vkeyFile],
      env,
    );
    expect(none).toMatchObject({ status: 0, stdout: '' });
    expect(none.stderr).toContain('nothing is held');
    const bad = runCli(['subject-access', '--crn', 'x1', '--vkey', vkeyFile], env);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--crn');
  }, 120_000);
});
