import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareServe, runCli, type ServeSetup, startServe } from '../support/cli.js';
import { consumerAgent, httpsRequest } from '../support/https-client.js';

/**
 * A rotated `AUDIT_SIGNING_KEY` never stops subject access (decisions §23, ADR 27), against a
 * real `serve`: a trail signed and archived under one key, serve restarted with another and
 * nothing appended since; the first SAR answers 200 at once, its checkpoint signed by the new
 * key (that key's signature added to the newest checkpoint, no other written) and every
 * disclosure proved under the new key's vkey. The archive, signed under the old key, opens with
 * `AUDIT_PREVIOUS_PUBLIC_KEYS`; without it serve refuses to start, naming what to set.
 */

const ORIGIN = 'case-read.rotation-test.example/audit';
const CRN = 'X123456';
const dir = mkdtempSync(join(tmpdir(), 'case-read-sar-rotation-'));
const archive = join(dir, 'archive');
let setup: ServeSetup;
let env: Record<string, string>;
let sar: { cert: string; key: string; apiKey: string };
let server: Awaited<ReturnType<typeof startServe>> | undefined;

const keyOf = (name: string) => join(dir, name, 'audit-signing-key.pem');
const publicKeyOf = (name: string) => join(dir, name, 'audit-signing-key.pub.pem');

async function stopServe(): Promise<void> {
  const running = server;
  server = undefined;
  if (!running || running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

function get(path: string, client?: { cert: string; key: string; apiKey: string }) {
  if (!server) throw new Error('serve is not running');
  return httpsRequest(`${server.url.replace('127.0.0.1', 'localhost')}${path}`, {
    ca: setup.ca,
    cert: client?.cert ?? setup.client.cert,
    key: client?.key ?? setup.client.key,
    headers: {
      'x-api-key': client?.apiKey ?? setup.apiKey,
      authorization: `Bearer ${setup.token}`,
    },
  });
}

beforeAll(async () => {
  setup = prepareServe(dir);
  setup.cli('audit', 'keygen', '--dir', join(dir, 'old-key'));
  setup.cli('audit', 'keygen', '--dir', join(dir, 'new-key'));
  const paths = JSON.parse(
    setup.cli('pki', 'client', 'sar-service', '--dir', join(dir, 'pki'), '--json'),
  ) as {
    cert: string;
    key: string;
  };
  setup.cli('clients', 'add', 'sar-service', '--permissions', 'getSubjectAccessRequest');
  sar = {
    cert: readFileSync(paths.cert, 'utf8'),
    key: readFileSync(paths.key, 'utf8'),
    apiKey: setup.cli('keys', 'issue', 'sar-service').trim(),
  };
  mkdirSync(archive);
  env = {
    ...setup.env,
    AUDIT_ORIGIN: ORIGIN,
    AUDIT_CHECKPOINT_RECORDS: '100',
    AUDIT_ARCHIVE_DIR: archive,
    RATE_LIMIT_DEFAULT: '100000/1s',
  };
  // Under the old key: reads of the crn among enough others for two whole tiles, archived and
  // let go of by the store; serve's last checkpoint at shutdown covers every record.
  server = await startServe({ ...env, AUDIT_SIGNING_KEY: keyOf('old-key') });
  const agent = consumerAgent({ maxSockets: 4 });
  for (let i = 0; i < 600; i++) {
    const res = await httpsRequest(
      `${server.url.replace('127.0.0.1', 'localhost')}/case/${i % 50 === 0 ? CRN : 'A000002'}`,
      {
        ca: setup.ca,
        ...setup.client,
        agent,
        headers: { 'x-api-key': setup.apiKey, authorization: `Bearer ${setup.token}` },
      },
    );
    expect(res.status).toBe(200);
  }
  agent.destroy();
  await stopServe();
  const archived = runCli(
    ['audit', 'archive', '--to', archive, '--before', new Date(Date.now() + 60_000).toISOString(), '--json'],
    { ...env, AUDIT_SIGNING_KEY: keyOf('old-key') },
  );
  expect(archived.status, archived.stderr).toBe(0);
  expect(
    (JSON.parse(archived.stdout) as { forgotten?: { upTo: number } }).forgotten?.upTo,
  ).toBeGreaterThanOrEqual(512);
}, 180_000);

afterAll(async () => {
  await stopServe();
  rmSync(dir, { recursive: true, force: true });
});

describe('subject access across a key rotation', () => {
  it('serve refuses to start with the archive under the old key and no AUDIT_PREVIOUS_PUBLIC_KEYS, saying so', () => {
    const refused = runCli(['config', 'check'], { ...env, AUDIT_SIGNING_KEY: keyOf('new-key') });
    // config check reads no archive; serve does, at start.
    expect(refused.status).toBe(0);
    const serve = runCli(['serve'], {
      ...env,
      AUDIT_SIGNING_KEY: keyOf('new-key'),
      HOST: '127.0.0.1',
      PORT: '0',
      MANAGEMENT_PORT: '0',
    });
    expect(serve.status).not.toBe(0);
    expect(serve.stderr + serve.stdout).toContain('AUDIT_ARCHIVE_DIR');
    expect(serve.stderr + serve.stdout).toContain('AUDIT_PREVIOUS_PUBLIC_KEYS');
  });

  it('the first SAR after the rotation answers 200 at once, proved under the new key', async () => {
    const checkpointsBefore = runCli(['audit', 'checkpoints', '--json'], env);
    expect(checkpointsBefore.status, checkpointsBefore.stderr).toBe(0);
    server = await startServe({
      ...env,
      AUDIT_SIGNING_KEY: keyOf('new-key'),
      AUDIT_PREVIOUS_PUBLIC_KEYS: publicKeyOf('old-key'),
    });
    const res = await get(`/subject-access-request?crn=${CRN}`, sar);
    expect(res.status, res.text).toBe(200);
    const answer = JSON.parse(res.text) as {
      content: { disclosures: { index: number }[]; proof: { checkpoint: string } };
    };
    expect(answer.content.disclosures).toHaveLength(12);
    await stopServe();

    const newVkey = join(dir, 'new.vkey');
    writeFileSync(newVkey, runCli(['audit', 'vkey'], { ...env, AUDIT_SIGNING_KEY: keyOf('new-key') }).stdout);
    const saved = join(dir, 'answer.json');
    writeFileSync(saved, res.text);
    const verified = runCli(['subject-access', 'verify', saved, '--vkey', newVkey], env);
    expect(verified.status, verified.stderr).toBe(0);
    // The checkpoint it proves against is the newest the old key signed, now bearing the new
    // key's signature too: nothing was appended before the SAR, and no other checkpoint written.
    // One checkpoint a line, oldest first.
    const lines = checkpointsBefore.stdout.trim().split('\n');
    const newest = JSON.parse(lines.at(-1) as string) as { seq: number };
    expect(answer.content.proof.checkpoint.split('\n')[1]).toBe(String(newest?.seq));
    // Another key's vkey does not prove it.
    setup.cli('audit', 'keygen', '--dir', join(dir, 'other-key'));
    const otherVkey = join(dir, 'other.vkey');
    writeFileSync(
      otherVkey,
      runCli(['audit', 'vkey'], { ...env, AUDIT_SIGNING_KEY: keyOf('other-key') }).stdout,
    );
    expect(runCli(['subject-access', 'verify', saved, '--vkey', otherVkey], env).status).toBe(1);
  }, 120_000);
});
