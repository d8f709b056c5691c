import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hasher } from '../../../src/adapters/crypto/api-keys.js';
import { withAccessStore } from '../../../src/app/commands/command-stores.js';
import type { Io } from '../../../src/app/commands/io.js';
import { admitClient } from '../../../src/domain/access/admit.js';
import { cliInProcess, runCliInProcess } from '../../support/cli.js';
import { testSchema } from '../../support/postgres.js';

/**
 * `clients update CN` changes a client in place (issue 66, item 5): any setting `clients add`
 * takes, checked by the same rules, merged with what is held; its API keys kept, so the key
 * its consumer holds is still admitted; nothing written when anything is refused. On a SQLite
 * access store and on PostgreSQL (a schema of its own, dropped afterwards).
 */
const dir = mkdtempSync(join(tmpdir(), 'case-read-clients-update-'));
const schema = testSchema('clients_update');
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await schema.drop();
});

const QUEUE = 'arn:aws:sqs:eu-west-2:123456789012:case-events';
const OTHER_QUEUE = 'arn:aws:sqs:eu-west-2:123456789012:case-events-2';
const ROLE = 'arn:aws:iam::123456789012:role/case-read-queue';
const OBO = ['--obo-issuer', 'https://login.example', '--obo-jwks', 'https://login.example/jwks.json'];

interface Shown {
  permissions: string[];
  suspended: boolean;
  rateLimit: string | null;
  queueArn: string | null;
  roleArn: string | null;
  onBehalfOf: {
    mode: string;
    issuer: string | null;
    jwks: string | null;
    audience: string | null;
    emailClaim: string;
  };
  redact: string[];
  limitedAccess: string;
  keys: { id: string; status: string }[];
}

describe('clients update reads each value by the rule clients add reads it, before any store is opened', () => {
  // A store that cannot be opened: a value refused after opening it would fail (1) on the store instead.
  const unopenable = `sqlite:${join(dir, 'no-such-dir', 'access.db')}`;
  it.each([
    [['--permissions', ','], '--permissions: no permissions given'],
    [['--rate-limit', '10'], '--rate-limit: rate limit must look like N/DURATION'],
    [
      ['--queue-arn', 'my-queue'],
      `--queue-arn must be an SQS queue ARN, e.g. arn:aws:sqs:eu-west-2:123456789012:my-queue, or none`,
    ],
    [['--role-arn', 'arn:aws:iam::123456789012:user/x'], '--role-arn must be an IAM role ARN'],
    [['--obo', 'always'], '--obo must be forbidden, optional or required'],
    [['--obo-jwks', 'http://login.example/jwks.json'], '--obo-jwks: expected a file path or an https:// URL'],
    [['--redact', 'crn'], '--redact: unknown field to redact "crn"'],
  ])('%j: %s', async (args, message) => {
    const result = await runCliInProcess([
      'clients',
      'update',
      'client-a',
      ...args,
      '--access-store',
      unopenable,
    ]);
    expect([result.status, result.stdout]).toEqual([2, '']);
    expect(result.stderr.split('\n')[0]).toContain(`case-read: ${message}`);
    expect(result.stderr).toContain("Run 'case-read clients update --help' for its usage.");
  });
});

describe.each([
  ['SQLite', `sqlite:${join(dir, 'access.db')}`],
  ['PostgreSQL', schema.url],
])('clients update on a %s access store', (_engine, store) => {
  const env = { ACCESS_STORE: store };
  const cli = cliInProcess(env);
  const run = (...args: string[]) => runCliInProcess(args, env);
  const show = async (cn: string) => JSON.parse(await cli('clients', 'show', cn, '--json')) as Shown;
  const update = async (cn: string, ...args: string[]) =>
    JSON.parse(await cli('clients', 'update', cn, ...args, '--json')) as Omit<Shown, 'keys'>;

  /** The client's admission with `key`, as the request path admits it (steps 3 and 4), on this store. */
  const admit = (cn: string, key: string, serialNumber = 'AB12') => {
    const io: Io = { out: () => {}, err: () => {}, env: {}, stderrIsTty: false };
    return withAccessStore(store, io, (directory) =>
      admitClient(
        { directory, hasher: sha256Hasher, clock: { now: () => new Date() } },
        { commonName: cn, serialNumber, thumbprintS256: null, notAfter: null },
        key,
      ),
    );
  };

  /** A client added with `args`, and the API key issued for it. */
  const added = async (cn: string, ...args: string[]) => {
    await cli('clients', 'add', cn, ...args);
    return JSON.parse(await cli('keys', 'issue', cn, '--json')) as { id: string; key: string };
  };

  it('changes permissions and rate limit together; the key issued before is still admitted', async () => {
    const key = await added(
      'perms',
      '--permissions',
      'getCase',
      '--rate-limit',
      '100/1s',
      '--queue-arn',
      QUEUE,
      '--redact',
      'disabilities',
      '--limited-access',
      'allow',
    );
    await cli('clients', 'suspend', 'perms');
    await cli('clients', 'resume', 'perms');
    await cli('certs', 'revoke', 'DEAD01', '--client', 'perms');
    const text = await cli(
      'clients',
      'update',
      'perms',
      '--permissions',
      'getCase,getRiskScores',
      '--rate-limit',
      '6000/1m',
    );
    expect(text.split('\n').slice(0, 3)).toEqual([
      'updated client perms',
      '  permissions     getCase, getRiskScores',
      '  rate limit      6000/1m',
    ]);
    expect(text).toContain(`  queue           ${QUEUE}\n`);
    const shown = await show('perms');
    expect(shown).toMatchObject({
      permissions: ['getCase', 'getRiskScores'],
      rateLimit: '6000/1m',
      suspended: false,
      queueArn: QUEUE,
      redact: ['disabilities'],
      limitedAccess: 'allow',
    });
    // Its key kept, active, and admitted as the request path admits it, with the new permissions.
    expect(shown.keys).toEqual([{ ...shown.keys[0], id: key.id, status: 'active' }]);
    const admission = await admit('perms', key.key);
    expect(admission.key.id).toBe(key.id);
    expect(admission.client.permissions).toEqual(['getCase', 'getRiskScores']);
    expect(admission.client.rateLimit).toBe('6000/1m');
    // The certificate revoked for it before is still refused.
    await expect(admit('perms', key.key, 'DEAD01')).rejects.toMatchObject({ reason: 'revoked-certificate' });
    // --json gives the client as updated; a suspended client stays suspended.
    await cli('clients', 'suspend', 'perms');
    expect(await update('perms', '--rate-limit', 'none')).toMatchObject({
      id: 'perms',
      rateLimit: null,
      suspended: true,
      permissions: ['getCase', 'getRiskScores'],
    });
    expect((await show('perms')).keys.map((k) => [k.id, k.status])).toEqual([[key.id, 'active']]);
  });

  it('changes the queue and its role; none removes them', async () => {
    const key = await added(
      'queued',
      '--permissions',
      'issueQueueToken',
      '--queue-arn',
      QUEUE,
      '--role-arn',
      ROLE,
    );
    expect(await update('queued', '--queue-arn', OTHER_QUEUE)).toMatchObject({
      queueArn: OTHER_QUEUE,
      roleArn: ROLE,
    });
    expect(await cli('clients', 'show', 'queued')).toContain(
      `  queue           ${OTHER_QUEUE} via ${ROLE}\n`,
    );
    expect(await update('queued', '--role-arn', 'none')).toMatchObject({
      queueArn: OTHER_QUEUE,
      roleArn: null,
    });
    await update('queued', '--role-arn', ROLE);
    // No queue: no role held for it either.
    expect(await update('queued', '--queue-arn', 'none')).toMatchObject({ queueArn: null, roleArn: null });
    expect(await cli('clients', 'show', 'queued')).toContain('  queue           (none)\n');
    expect(await update('queued', '--queue-arn', QUEUE, '--role-arn', ROLE)).toMatchObject({
      queueArn: QUEUE,
      roleArn: ROLE,
    });
    expect((await admit('queued', key.key)).client.queueArn).toBe(QUEUE);
  });

  it('changes the on-behalf-of settings: a switch of mode, and one detail alone', async () => {
    const key = await added('obo', '--permissions', 'getCase');
    // From forbidden, a mode needs the whole set, with what is held (nothing).
    const partial = await run(
      'clients',
      'update',
      'obo',
      '--obo',
      'required',
      '--obo-issuer',
      'https://login.example',
    );
    expect(partial.status).toBe(2);
    expect(partial.stderr).toContain('case-read: --obo required needs --obo-jwks, --obo-audience');
    expect(await update('obo', '--obo', 'required', ...OBO, '--obo-audience', 'case-read')).toMatchObject({
      onBehalfOf: {
        mode: 'required',
        issuer: 'https://login.example',
        jwks: 'https://login.example/jwks.json',
        audience: 'case-read',
        emailClaim: 'email',
      },
    });
    // One detail alone: only it changes.
    expect((await update('obo', '--obo-audience', 'case-read-v2')).onBehalfOf).toEqual({
      mode: 'required',
      issuer: 'https://login.example',
      jwks: 'https://login.example/jwks.json',
      audience: 'case-read-v2',
      emailClaim: 'email',
    });
    expect((await update('obo', '--obo', 'optional', '--obo-email-claim', 'upn')).onBehalfOf).toEqual({
      mode: 'optional',
      issuer: 'https://login.example',
      jwks: 'https://login.example/jwks.json',
      audience: 'case-read-v2',
      emailClaim: 'upn',
    });
    expect(await cli('clients', 'show', 'obo')).toContain(
      '  on-behalf-of    optional (iss https://login.example, aud case-read-v2, jwks https://login.example/jwks.json, e-mail claim upn)\n',
    );
    // Forbidden clears every detail.
    expect((await update('obo', '--obo', 'forbidden')).onBehalfOf).toEqual({
      mode: 'forbidden',
      issuer: null,
      jwks: null,
      audience: null,
      emailClaim: 'email',
    });
    expect((await admit('obo', key.key)).client.onBehalfOf.mode).toBe('forbidden');
  });

  it('clients add of a CN held is refused and replaces nothing, its suspension included', async () => {
    const key = await added('held', '--permissions', 'getCase');
    await cli('clients', 'suspend', 'held');
    const before = await show('held');
    const again = await run('clients', 'add', 'held', '--permissions', 'getCase,getRiskScores');
    expect([again.status, again.stdout]).toEqual([1, '']);
    expect(again.stderr).toContain('case-read: client held already exists');
    expect(await show('held')).toEqual(before);
    await expect(admit('held', key.key)).rejects.toMatchObject({ reason: 'suspended-client' });
  });

  it('refuses an unknown client, a bad value and conflicting on-behalf-of options, and writes nothing', async () => {
    const key = await added('steady', '--permissions', 'getCase', '--rate-limit', '100/1s');
    const before = await show('steady');
    const refusals: [string[], number, string][] = [
      [['nobody', '--permissions', 'getRiskScores'], 1, 'no client nobody'],
      [
        ['steady', '--permissions', 'getCase,deleteCase'],
        2,
        '--permissions: unknown permission "deleteCase"',
      ],
      [
        ['steady', '--permissions', 'getRiskScores', '--rate-limit', 'lots'],
        2,
        '--rate-limit: rate limit must look like N/DURATION',
      ],
      // The client is forbidden on-behalf-of tokens: their details need a mode that takes them.
      [
        ['steady', '--permissions', 'getRiskScores', '--obo-audience', 'case-read'],
        2,
        '--obo-issuer, --obo-jwks, --obo-audience and --obo-email-claim need --obo optional or required',
      ],
      [
        ['steady', '--obo', 'optional', '--obo-audience', 'case-read'],
        2,
        '--obo optional needs --obo-issuer, --obo-jwks',
      ],
      [
        ['steady', '--queue-arn', 'none', '--role-arn', ROLE],
        2,
        '--role-arn is the role assumed for the queue: it cannot be given with --queue-arn none',
      ],
      [
        ['steady'],
        2,
        'clients update needs one or more of --permissions, --queue-arn, --role-arn, --rate-limit',
      ],
    ];
    for (const [args, status, message] of refusals) {
      const result = await run('clients', 'update', ...args);
      expect([args, result.status, result.stdout]).toEqual([args, status, '']);
      expect(result.stderr).toContain(`case-read: ${message}`);
    }
    expect(await show('steady')).toEqual(before);
    expect((await admit('steady', key.key)).client.permissions).toEqual(['getCase']);
  });
});
