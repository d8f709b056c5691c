import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cosignerFromSkey,
  newCosignerKey,
  writeCosignerKeyFile,
} from '../../../src/adapters/crypto/cosigner-keys.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import { main } from '../../../src/app/cli.js';
import { buildWitness, readWitnessSettings, reloadWitnessTls } from '../../../src/app/composition/witness.js';
import { witnessHandler } from '../../../src/app/witness/http.js';
import { startWitnessServer } from '../../../src/app/witness/server.js';
import { parseCosignerKey } from '../../../src/tlog/cosignature.js';
import { httpsRequest } from '../../support/https-client.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';
import { isCosignature, TestLog } from './support.js';

/**
 * `case-read witness keygen` and the refusals of `case-read witness serve`'s configuration,
 * each naming its variable, run through the CLI's `main`; and the witness over HTTPS.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-witness-cli-'));
let pki: TestPki;
beforeAll(async () => {
  pki = await makeTestPki();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  pki.cleanup();
});

async function cli(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const status = await main(args, {
    out: (line) => {
      stdout += `${line}\n`;
    },
    err: (line) => {
      stderr += `${line}\n`;
    },
    env,
    stderrIsTty: false,
  });
  return { status, stdout, stderr };
}

describe('witness keygen', () => {
  it('writes DIR/witness-key (0600) and prints the cosignature/v1 verifier key as its last line', async () => {
    const keys = join(dir, 'keys');
    const result = await cli(['witness', 'keygen', '--name', 'witness.example.org/w1', '--dir', keys]);
    expect(result.status).toBe(0);
    const path = join(keys, 'witness-key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const last = result.stdout.trimEnd().split('\n').at(-1) ?? '';
    const key = parseCosignerKey(sha256Bytes, last);
    expect(key).toMatchObject({ name: 'witness.example.org/w1' });
    expect(Buffer.from(last.split('+').slice(2).join('+'), 'base64')[0]).toBe(0x04);
    // The file holds that key's private half.
    expect(cosignerFromSkey(readFileSync(path, 'utf8')).vkey).toBe(last);
  });

  it('never overwrites a key, and names what it needs', async () => {
    const keys = join(dir, 'again');
    expect((await cli(['witness', 'keygen', '--name', 'w.example/a', '--dir', keys])).status).toBe(0);
    const before = readFileSync(join(keys, 'witness-key'), 'utf8');
    const again = await cli(['witness', 'keygen', '--name', 'w.example/b', '--dir', keys]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/witness-key exists: a key is never overwritten/);
    expect(readFileSync(join(keys, 'witness-key'), 'utf8')).toBe(before);
    expect(await cli(['witness', 'keygen', '--dir', keys])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/required option '--name <NAME>' not specified/),
    });
    expect(await cli(['witness', 'keygen', '--name', 'w.example/c', '--dir', ''])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/--dir needs a directory/),
    });
    expect(await cli(['witness', 'keygen', '--name', 'has space', '--dir', join(dir, 'x')])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/cannot name a key/),
    });
    expect(await cli(['witness', 'rotate'])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/unknown command 'rotate'/),
    });
  });
});

describe('witness serve refuses a configuration it cannot run, naming the variable', () => {
  const logA = new TestLog('log-a.test.example/log');
  const files = join(dir, 'config');
  mkdirSync(files, { recursive: true });
  const key = join(files, 'witness-key');
  writeCosignerKeyFile(key, newCosignerKey('witness.example.org/w1').skey);
  const file = (name: string, content: string, mode = 0o644) => {
    const path = join(files, name);
    writeFileSync(path, content);
    chmodSync(path, mode);
    return path;
  };
  const logs = file('logs', `log ${logA.vkey}\n`);
  const good = { WITNESS_KEY: key, WITNESS_LOGS: logs, WITNESS_STORE: `sqlite:${join(files, 'w.db')}` };
  const refused = async (env: Record<string, string>, ...messages: RegExp[]) => {
    const result = await cli(['witness', 'serve'], env);
    expect(result.status).toBe(1);
    for (const message of messages) expect(result.stderr).toMatch(message);
  };

  it('none of its three files', () =>
    refused(
      {},
      /WITNESS_KEY: the witness's private key file is needed/,
      /WITNESS_LOGS: /,
      /WITNESS_STORE: /,
    ));

  it('plain HTTP off loopback; TLS_CERT without TLS_KEY; a port that is none', async () => {
    await refused({ ...good, HOST: '0.0.0.0' }, /TLS_CERT: HOST 0.0.0.0 is not loopback/);
    await refused(
      { ...good, TLS_CERT: pki.write('cert.pem', pki.server.certPem) },
      /TLS_KEY: TLS_CERT and TLS_KEY go together/,
    );
    await refused({ ...good, PORT: '99999' }, /PORT: /);
    expect(() => readWitnessSettings({ ...good, HOST: '::1' })).not.toThrow();
    expect(() => readWitnessSettings({ ...good, HOST: 'localhost' })).not.toThrow();
    expect(() =>
      readWitnessSettings({ ...good, HOST: '0.0.0.0', TLS_CERT: 'cert.pem', TLS_KEY: 'key.pem' }),
    ).not.toThrow();
  });

  it('a key file others may read or write, one that holds no cosigner key, one that is no file; a logs file that is a FIFO', async () => {
    const open = file('open-key', readFileSync(key, 'utf8'), 0o644);
    await refused(
      { ...good, WITNESS_KEY: open },
      /WITNESS_KEY: .*open-key is readable by others \(mode 0644\)/,
    );
    const noKey = file('no-key', 'not a key\n', 0o600);
    await refused({ ...good, WITNESS_KEY: noKey }, /WITNESS_KEY: .*no-key: it is not a private key line/);
    await refused({ ...good, WITNESS_KEY: files }, /WITNESS_KEY: .* is not a regular file \(a directory\)/);
    // Writable by others: anyone could put their own key in its place (decisions §20).
    const writable = file('writable-key', readFileSync(key, 'utf8'), 0o602);
    await refused(
      { ...good, WITNESS_KEY: writable },
      /WITNESS_KEY: .*writable-key is writable by others \(mode 0602\)/,
    );
    // A FIFO as the logs file: refused at once, never waited on.
    const fifo = join(files, 'logs.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await refused(
      { ...good, WITNESS_LOGS: fifo },
      /WITNESS_LOGS: .*logs\.fifo is not a regular file \(a FIFO\)/,
    );
    await refused(
      { ...good, WITNESS_KEY: join(files, 'missing') },
      /WITNESS_KEY: .*missing cannot be read \(ENOENT\)/,
    );
  });

  it('a logs file with another kind of line, a cosigner key for a log, or no log at all', async () => {
    const policy = file('policy', `log ${logA.vkey}\nquorum none\n`);
    await refused(
      { ...good, WITNESS_LOGS: policy },
      /WITNESS_LOGS: .*policy: line 2: .*only "log <vkey> \[<url>\]" lines, not "quorum"/,
    );
    const cosigner = file('cosigner', `# a witness's key\nlog ${newCosignerKey('w.example/w').vkey}\n`);
    await refused(
      { ...good, WITNESS_LOGS: cosigner },
      /WITNESS_LOGS: .*line 2: a log key is a note key \(type 0x01\)/,
    );
    await refused(
      { ...good, WITNESS_LOGS: file('twice', `log ${logA.vkey}\nlog ${logA.vkey}\n`) },
      /line 2: .*already listed/,
    );
    await refused(
      { ...good, WITNESS_LOGS: file('empty', '# nothing yet\n') },
      /WITNESS_LOGS: .*names no log/,
    );
  });

  it('a store that is none of its forms, or reached unverified off this host in production', async () => {
    await refused(
      { ...good, WITNESS_STORE: 'redis://localhost:6379' },
      /WITNESS_STORE: expected sqlite:PATH or postgres:/,
    );
    await refused({ ...good, WITNESS_STORE: 'sqlite:' }, /WITNESS_STORE: sqlite: needs the path of a file/);
    await refused(
      { ...good, WITNESS_STORE: 'postgres://u@db.example.org/w?table=x' },
      /WITNESS_STORE: postgres:\/\/ takes only/,
    );
    await refused(
      { ...good, NODE_ENV: 'production', WITNESS_STORE: 'postgres://u@db.example.org/w' },
      /WITNESS_STORE: db.example.org:5432 is reached plaintext, which NODE_ENV=production refuses/,
    );
  });

  it('a TLS key others may read, or one that is not the certificate’s', async () => {
    const cert = pki.write('witness-cert.pem', pki.server.certPem);
    const openKey = file('open-tls-key', pki.server.keyPem, 0o644);
    await refused({ ...good, TLS_CERT: cert, TLS_KEY: openKey }, /TLS_KEY: .*readable by others/);
    const other = await pki.client('someone-else');
    const wrongKey = file('wrong-tls-key', other.keyPem, 0o600);
    await refused(
      { ...good, TLS_CERT: cert, TLS_KEY: wrongKey },
      /TLS_KEY: is not the key of the certificate in TLS_CERT/,
    );
  });

  it('at a reload (SIGHUP), the same reads without blocking the event loop: a FIFO as the key refused, good files taken', async () => {
    const cert = pki.write('reload-cert.pem', pki.server.certPem);
    const key = file('reload-key', pki.server.keyPem, 0o600);
    await expect(reloadWitnessTls({ cert, key })).resolves.toEqual({
      cert: pki.server.certPem,
      key: pki.server.keyPem,
    });
    const fifo = join(files, 'reload-key.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(reloadWitnessTls({ cert, key: fifo })).rejects.toThrow(
      `TLS_KEY: ${fifo} is not a regular file (a FIFO)`,
    );
  });
});

describe('witness serve over HTTPS', () => {
  it('cosigns over TLS with its server certificate, asking the log for none of its own', async () => {
    const log = new TestLog('log-tls.test.example/log');
    const home = join(dir, 'https');
    mkdirSync(home);
    const key = newCosignerKey('witness.example.org/tls');
    writeCosignerKeyFile(join(home, 'witness-key'), key.skey);
    writeFileSync(join(home, 'logs'), `log ${log.vkey}\n`);
    const settings = readWitnessSettings({
      WITNESS_KEY: join(home, 'witness-key'),
      WITNESS_LOGS: join(home, 'logs'),
      WITNESS_STORE: `sqlite:${join(home, 'w.db')}`,
      HOST: '0.0.0.0',
      PORT: '0',
      TLS_CERT: pki.write('tls-cert.pem', pki.server.certPem),
      TLS_KEY: pki.write('tls-key.pem', pki.server.keyPem),
      LOG_LEVEL: 'silent',
    });
    const witness = await buildWitness(settings);
    const server = await startWitnessServer(
      witnessHandler(witness.parts, witness.metrics, () => {}),
      {
        host: '127.0.0.1',
        port: 0,
        ciphers: witness.ciphers,
        ...(witness.tls ? { tls: witness.tls } : {}),
      },
    );
    try {
      expect(server.url).toMatch(/^https:/);
      const answer = await httpsRequest(`${server.url}/add-checkpoint`, {
        ca: pki.ca.certPem,
        method: 'POST',
        body: log.body(0, 4),
      });
      expect(answer.status).toBe(200);
      expect(isCosignature(answer.text, key.vkey, log.text(4))).toBe(true);
    } finally {
      await server.close(1000);
      await witness.close();
    }
  });
});
