import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import { jwksSourceProblem } from '../../domain/access/jwks-source.js';
import {
  DEFAULT_LIMITED_ACCESS_SETTING,
  parseLimitedAccessSetting,
} from '../../domain/access/limited-access.js';
import type { ApiKeyRecord, Client, OnBehalfOfMode } from '../../domain/access/model.js';
import { parsePermissionList } from '../../domain/access/permissions.js';
import { parseRedactList } from '../../domain/access/redaction.js';
import { QueueArn, RoleArn } from '../../domain/queue/arns.js';
import { generateApiKey } from '../composition/operator.js';
import { parseDuration, parseRateLimit } from '../durations.js';
import { clientIdOf, parse, positionals, usage } from './arguments.js';
import { withAccessStore } from './command-stores.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, report } from './io.js';

const STORE = { 'access-store': { type: 'string' }, json: { type: 'boolean' } } as const;

const OBO_MODES: readonly OnBehalfOfMode[] = ['forbidden', 'optional', 'required'];

function describeClient(c: Client): string[] {
  return [
    `${c.id}${c.suspended ? ' (suspended)' : ''}`,
    `  permissions     ${c.permissions.join(', ') || '(none)'}`,
    `  rate limit      ${c.rateLimit ?? '(service default)'}`,
    `  queue           ${c.queueArn ?? '(none)'}${c.roleArn ? ` via ${c.roleArn}` : ''}`,
    `  on-behalf-of    ${c.onBehalfOf.mode}${c.onBehalfOf.mode === 'forbidden' ? '' : ` (iss ${c.onBehalfOf.issuer}, aud ${c.onBehalfOf.audience}, jwks ${c.onBehalfOf.jwks}, e-mail claim ${c.onBehalfOf.emailClaim})`}`,
    `  withheld        ${c.redact.join(', ') || '(none)'}`,
    `  limited access  ${c.limitedAccess === 'allow' ? 'allow (enforced by the client when it acts as itself)' : 'deny (when the client acts as itself)'}`,
  ];
}

/** `--redact FIELD[,FIELD…]|none`; an unknown field is a usage error naming the allowed ones. */
const redactOption = (raw: string) => usage(() => parseRedactList(raw));
/** `--limited-access deny|allow`; anything else is a usage error naming both. */
const limitedAccessOption = (raw: string) => usage(() => parseLimitedAccessSetting(raw));

function keyStatus(k: ApiKeyRecord, now: Date): string {
  if (k.revokedAt !== null) return `revoked ${k.revokedAt.toISOString()}`;
  if (k.expiresAt !== null && k.expiresAt <= now) return `expired ${k.expiresAt.toISOString()}`;
  return k.expiresAt === null ? 'active' : `active until ${k.expiresAt.toISOString()}`;
}

const keyJson = (k: ApiKeyRecord, now: Date) => ({
  id: k.id,
  client: k.clientId,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
  status: keyStatus(k, now).split(' ')[0],
});

async function clients(sub: string | undefined, args: string[], io: Io): Promise<number> {
  switch (sub) {
    case 'add': {
      const { values, positionals: rest } = parse(args, {
        ...STORE,
        permissions: { type: 'string' },
        'queue-arn': { type: 'string' },
        'role-arn': { type: 'string' },
        'rate-limit': { type: 'string' },
        obo: { type: 'string' },
        'obo-issuer': { type: 'string' },
        'obo-jwks': { type: 'string' },
        'obo-audience': { type: 'string' },
        'obo-email-claim': { type: 'string' },
        redact: { type: 'string' },
        'limited-access': { type: 'string' },
      });
      const id = clientIdOf(positionals(rest, ['CN'])[0] as string);
      const redact = values.redact === undefined ? [] : redactOption(values.redact);
      const limitedAccess =
        values['limited-access'] === undefined
          ? DEFAULT_LIMITED_ACCESS_SETTING
          : limitedAccessOption(values['limited-access']);
      if (values.permissions === undefined) throw new UsageError('clients add needs --permissions P[,P...]');
      const permissions = usage(() => parsePermissionList(values.permissions as string));
      if (values['queue-arn'] !== undefined && !QueueArn.tryParse(values['queue-arn'])) {
        throw new UsageError(`--queue-arn must be an SQS queue ARN, e.g. ${QueueArn.example}`);
      }
      if (values['role-arn'] !== undefined && !RoleArn.tryParse(values['role-arn'])) {
        throw new UsageError(`--role-arn must be an IAM role ARN, e.g. ${RoleArn.example}`);
      }
      if (values['rate-limit'] !== undefined) usage(() => parseRateLimit(values['rate-limit'] as string));
      const mode = (values.obo ?? 'forbidden') as OnBehalfOfMode;
      if (!OBO_MODES.includes(mode)) throw new UsageError('--obo must be forbidden, optional or required');
      const obo = {
        issuer: values['obo-issuer'],
        jwks: values['obo-jwks'],
        audience: values['obo-audience'],
      };
      if (mode !== 'forbidden') {
        const missing = Object.entries(obo)
          .filter(([, v]) => v === undefined)
          .map(([k]) => `--obo-${k}`);
        if (missing.length > 0) throw new UsageError(`--obo ${mode} needs ${missing.join(', ')}`);
        // Refused here, not at the first request: the verifier reads the keys from it.
        const jwks = jwksSourceProblem(obo.jwks as string);
        if (jwks !== undefined) throw new UsageError(`--obo-jwks: ${jwks}`);
      } else if (Object.values(obo).some((v) => v !== undefined) || values['obo-email-claim'] !== undefined) {
        throw new UsageError(
          '--obo-issuer, --obo-jwks, --obo-audience and --obo-email-claim need --obo optional or required',
        );
      }
      const client: Client = {
        id,
        permissions,
        suspended: false,
        rateLimit: values['rate-limit'] ?? null,
        queueArn: values['queue-arn'] ?? null,
        roleArn: values['role-arn'] ?? null,
        onBehalfOf: {
          mode,
          issuer: obo.issuer ?? null,
          jwks: obo.jwks ?? null,
          audience: obo.audience ?? null,
          emailClaim: values['obo-email-claim'] ?? 'email',
        },
        redact,
        limitedAccess,
      };
      await withAccessStore(values['access-store'], io, async (store) => {
        if (await store.findClient(id)) throw new CommandError(`client ${id} already exists`);
        await store.saveClient(client);
      });
      report(io, values.json, client, [`added client ${id}`, ...describeClient(client).slice(1)]);
      return EXIT.ok;
    }
    case 'list': {
      const { values, positionals: rest } = parse(args, STORE);
      positionals(rest, []);
      const { all, seen } = await withAccessStore(values['access-store'], io, async (store) => ({
        all: await store.listClients(),
        seen: new Map((await store.listCertificatesSeen()).map((c) => [c.clientId, c])),
      }));
      // The certificate each client last presented to the service, and when it ends.
      const certificateOf = (id: string) => {
        const c = seen.get(id);
        return c === undefined
          ? null
          : {
              serialNumber: c.serialNumber,
              notAfter: c.notAfter.toISOString(),
              seenAt: c.seenAt.toISOString(),
            };
      };
      const now = Date.now();
      const certificateLine = (id: string) => {
        const c = seen.get(id);
        if (c === undefined) return 'certificate not yet presented';
        const days = Math.floor((c.notAfter.getTime() - now) / 86_400_000);
        const left = days < 0 ? 'EXPIRED' : `${days} day${days === 1 ? '' : 's'} left`;
        return `certificate ${c.serialNumber} expires ${c.notAfter.toISOString()} (${left})`;
      };
      report(
        io,
        values.json,
        all.map((c) => ({ ...c, certificate: certificateOf(c.id) })),
        all.length === 0
          ? ['no clients']
          : all.map(
              (c) =>
                `${c.id}${c.suspended ? ' (suspended)' : ''}  ${c.permissions.join(',')}  ${certificateLine(c.id)}`,
            ),
      );
      return EXIT.ok;
    }
    case 'show': {
      const { values, positionals: rest } = parse(args, STORE);
      const id = positionals(rest, ['CN'])[0] as string;
      const found = await withAccessStore(values['access-store'], io, async (store) => {
        const client = await store.findClient(id);
        return client && { client, keys: await store.listApiKeys(id) };
      });
      if (!found) throw new CommandError(`no client ${id}`);
      const now = new Date();
      report(io, values.json, { ...found.client, keys: found.keys.map((k) => keyJson(k, now)) }, [
        ...describeClient(found.client),
        `  keys            ${found.keys.length === 0 ? '(none)' : ''}`,
        ...found.keys.map((k) => `    ${k.id}  ${keyStatus(k, now)}`),
      ]);
      return EXIT.ok;
    }
    case 'update': {
      const { values, positionals: rest } = parse(args, {
        ...STORE,
        redact: { type: 'string' },
        'limited-access': { type: 'string' },
      });
      const id = positionals(rest, ['CN'])[0] as string;
      if (values.redact === undefined && values['limited-access'] === undefined)
        throw new UsageError(
          'clients update needs --redact FIELD[,FIELD...]|none or --limited-access deny|allow',
        );
      const change: Partial<Pick<Client, 'redact' | 'limitedAccess'>> = {
        ...(values.redact !== undefined && { redact: redactOption(values.redact) }),
        ...(values['limited-access'] !== undefined && {
          limitedAccess: limitedAccessOption(values['limited-access']),
        }),
      };
      const updated = await withAccessStore(values['access-store'], io, async (store) => {
        const client = await store.findClient(id);
        if (!client) return undefined;
        const changed: Client = { ...client, ...change };
        await store.saveClient(changed);
        return changed;
      });
      if (!updated) throw new CommandError(`no client ${id}`);
      report(io, values.json, updated, [`updated client ${id}`, ...describeClient(updated).slice(1)]);
      return EXIT.ok;
    }
    case 'suspend':
    case 'resume': {
      const { values, positionals: rest } = parse(args, STORE);
      const id = positionals(rest, ['CN'])[0] as string;
      const done = await withAccessStore(values['access-store'], io, (store) =>
        store.setSuspended(id, sub === 'suspend'),
      );
      if (!done) throw new CommandError(`no client ${id}`);
      report(
        io,
        values.json,
        { client: id, suspended: sub === 'suspend' },
        `${sub === 'suspend' ? 'suspended' : 'resumed'} client ${id}`,
      );
      return EXIT.ok;
    }
    case 'remove': {
      const { values, positionals: rest } = parse(args, STORE);
      const id = positionals(rest, ['CN'])[0] as string;
      const done = await withAccessStore(values['access-store'], io, (store) => store.removeClient(id));
      if (!done) throw new CommandError(`no client ${id}`);
      report(io, values.json, { client: id, removed: true }, `removed client ${id} and its keys`);
      return EXIT.ok;
    }
    default:
      throw UsageError.unknownSubcommand(
        'clients',
        'add, list, show, update, suspend, resume or remove',
        sub,
      );
  }
}

async function keys(sub: string | undefined, args: string[], io: Io): Promise<number> {
  switch (sub) {
    case 'issue': {
      const { values, positionals: rest } = parse(args, { ...STORE, 'expires-in': { type: 'string' } });
      const id = positionals(rest, ['CN'])[0] as string;
      const lifetime =
        values['expires-in'] === undefined
          ? null
          : usage(() => parseDuration(values['expires-in'] as string, '--expires-in'));
      const now = new Date();
      const generated = generateApiKey();
      const record: ApiKeyRecord = {
        id: generated.id,
        clientId: id,
        secretHash: generated.secretHash,
        createdAt: now,
        expiresAt: lifetime === null ? null : new Date(now.getTime() + lifetime),
        revokedAt: null,
      };
      await withAccessStore(values['access-store'], io, async (store) => {
        if (!(await store.findClient(id)))
          throw new CommandError(`no client ${id}; add it first with case-read clients add`);
        await store.addApiKey(record);
      });
      // The key is shown once, alone on its line; only its hash is stored.
      report(io, values.json, { ...keyJson(record, now), key: generated.key }, generated.key);
      if (!values.json)
        io.err(
          `issued key ${record.id} for ${id}${record.expiresAt ? `, expires ${record.expiresAt.toISOString()}` : ''}; it is not shown again`,
        );
      return EXIT.ok;
    }
    case 'list': {
      const { values, positionals: rest } = parse(args, STORE);
      const id = positionals(rest, ['CN'])[0] as string;
      const list = await withAccessStore(values['access-store'], io, async (store) => {
        if (!(await store.findClient(id))) throw new CommandError(`no client ${id}`);
        return store.listApiKeys(id);
      });
      const now = new Date();
      report(
        io,
        values.json,
        list.map((k) => keyJson(k, now)),
        list.length === 0
          ? ['no keys']
          : list.map((k) => `${k.id}  ${keyStatus(k, now)}  created ${k.createdAt.toISOString()}`),
      );
      return EXIT.ok;
    }
    case 'revoke': {
      const { values, positionals: rest } = parse(args, STORE);
      const keyId = positionals(rest, ['KEY_ID'])[0] as string;
      const done = await withAccessStore(values['access-store'], io, (store) =>
        store.revokeApiKey(keyId, new Date()),
      );
      if (!done) throw new CommandError(`no key ${keyId}`);
      report(
        io,
        values.json,
        { key: keyId, revoked: true },
        `revoked key ${keyId}; it stops working on the next request`,
      );
      return EXIT.ok;
    }
    default:
      throw UsageError.unknownSubcommand('keys', 'issue, list or revoke', sub);
  }
}

async function certs(sub: string | undefined, args: string[], io: Io): Promise<number> {
  if (sub === 'sign') return (await import('./certs-sign.js')).certsSign(args, io);
  if (sub !== 'revoke') throw UsageError.unknownSubcommand('certs', 'sign or revoke', sub);
  const { values, positionals: rest } = parse(args, { ...STORE, client: { type: 'string' } });
  const serial = usage(() => CertificateSerial.parse(positionals(rest, ['SERIAL'])[0] as string));
  const clientId = values.client === undefined ? null : clientIdOf(values.client);
  await withAccessStore(values['access-store'], io, (store) =>
    store.revokeCertificate({ serialNumber: serial, clientId, revokedAt: new Date() }),
  );
  report(
    io,
    values.json,
    { serialNumber: serial, client: clientId },
    `revoked certificate serial ${serial}${clientId ? ` for ${clientId}` : ' for every client'}`,
  );
  return EXIT.ok;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

async function grants(sub: string | undefined, args: string[], io: Io): Promise<number> {
  if (sub === 'list') {
    const { values, positionals: rest } = parse(args, STORE);
    positionals(rest, []);
    const all = await withAccessStore(values['access-store'], io, (store) => store.listGrants());
    report(
      io,
      values.json,
      all,
      all.length === 0 ? ['no grants'] : all.map((g) => `${g.email}  ${g.permissions.join(',')}`),
    );
    return EXIT.ok;
  }
  if (sub !== 'add' && sub !== 'remove') {
    throw UsageError.unknownSubcommand('grants', 'add, remove or list', sub);
  }
  const { values, positionals: rest } = parse(args, STORE);
  const [email, list] = positionals(rest, ['EMAIL', 'P[,P...]']) as [string, string];
  if (!EMAIL.test(email)) throw new UsageError('EMAIL must be an e-mail address');
  const permissions = usage(() => parsePermissionList(list)) as Client['permissions'];
  await withAccessStore(values['access-store'], io, (store) =>
    sub === 'add' ? store.addGrant(email, permissions) : store.removeGrant(email, permissions),
  );
  report(
    io,
    values.json,
    { email: email.toLowerCase(), [sub === 'add' ? 'added' : 'removed']: permissions },
    `${sub === 'add' ? 'granted' : 'removed'} ${permissions.join(', ')} ${sub === 'add' ? 'to' : 'from'} ${email.toLowerCase()}`,
  );
  return EXIT.ok;
}

export const accessCommands = { clients, keys, certs, grants };
