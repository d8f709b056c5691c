// The access commands: `clients`, `keys`, `certs revoke` and `grants`, each on the access store
// (--access-store, else ACCESS_STORE, else its default). Defined in src/app/cli/access.ts;
// `certs sign` is in certs-sign.ts.
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import { parsePermissionList } from '../../domain/access/permissions.js';
import { generateApiKey } from '../composition/operator.js';
import { parseDuration } from '../durations.js';
import { clientIdOf, usage } from './arguments.js';
import {
  anyClientOptionGiven,
  CLIENT_OPTIONS,
  type ClientOptionsGiven,
  changedClient,
  clientChangeOf,
  newClient,
} from './client-options.js';
import { withAccessStore } from './command-stores.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, type JsonGiven, report } from './io.js';

/** What every access command is given: the access store (else ACCESS_STORE), and JSON output. */
export interface StoreGiven extends JsonGiven {
  readonly accessStore?: string | undefined;
}

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

/** `clients add CN`: the settings of a new client, each as given on the command line. */
export interface ClientAddGiven extends StoreGiven, ClientOptionsGiven {
  readonly permissions: string;
}

/** `clients add CN --permissions P[,P...] …`: a new client; one already held is refused. */
export async function clientsAdd(cn: string, values: ClientAddGiven, io: Io): Promise<number> {
  const id = clientIdOf(cn);
  const client = changedClient(newClient(id), clientChangeOf(values));
  // Inserted only when no client has the id: one held, even if added a moment ago by another
  // operator, is refused, never replaced.
  await withAccessStore(values.accessStore, io, async (store) => {
    if (!(await store.addClient(client))) throw new CommandError(`client ${id} already exists`);
  });
  report(io, values.json, client, [`added client ${id}`, ...describeClient(client).slice(1)]);
  return EXIT.ok;
}

/** `clients list`: every client, with the certificate it last presented and when that ends. */
export async function clientsList(values: StoreGiven, io: Io): Promise<number> {
  const { all, seen } = await withAccessStore(values.accessStore, io, async (store) => ({
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

/** `clients show CN`: one client's settings and its keys. */
export async function clientsShow(id: string, values: StoreGiven, io: Io): Promise<number> {
  const found = await withAccessStore(values.accessStore, io, async (store) => {
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

/** `clients update CN`: the settings to change, each as given on the command line. */
export type ClientUpdateGiven = StoreGiven & ClientOptionsGiven;

/**
 * `clients update CN [--permissions …] [--rate-limit …] …`: the settings given changed in place,
 * the rest of the client (its keys, its suspension) kept as held when it is written (another
 * operator's change meanwhile is not undone); nothing is written when any is refused.
 */
export async function clientsUpdate(id: string, values: ClientUpdateGiven, io: Io): Promise<number> {
  if (!anyClientOptionGiven(values))
    throw new UsageError(`clients update needs one or more of ${Object.values(CLIENT_OPTIONS).join(', ')}`);
  const change = clientChangeOf(values);
  // Read, changed and written atomically by the store: what the change keeps is what is held
  // as it is written, so a suspension (or another update) committed meanwhile is not undone.
  const updated = await withAccessStore(values.accessStore, io, (store) =>
    store.updateClient(id, (held) => changedClient(held, change)),
  );
  if (!updated) throw new CommandError(`no client ${id}`);
  report(io, values.json, updated, [`updated client ${id}`, ...describeClient(updated).slice(1)]);
  return EXIT.ok;
}

async function setSuspended(id: string, suspend: boolean, values: StoreGiven, io: Io): Promise<number> {
  const done = await withAccessStore(values.accessStore, io, (store) => store.setSuspended(id, suspend));
  if (!done) throw new CommandError(`no client ${id}`);
  report(
    io,
    values.json,
    { client: id, suspended: suspend },
    `${suspend ? 'suspended' : 'resumed'} client ${id}`,
  );
  return EXIT.ok;
}

/** `clients suspend CN`: the client is refused until it is resumed. */
export const clientsSuspend = (id: string, values: StoreGiven, io: Io): Promise<number> =>
  setSuspended(id, true, values, io);

/** `clients resume CN`: a suspended client is served again. */
export const clientsResume = (id: string, values: StoreGiven, io: Io): Promise<number> =>
  setSuspended(id, false, values, io);

/** `clients remove CN`: the client and its keys. */
export async function clientsRemove(id: string, values: StoreGiven, io: Io): Promise<number> {
  const done = await withAccessStore(values.accessStore, io, (store) => store.removeClient(id));
  if (!done) throw new CommandError(`no client ${id}`);
  report(io, values.json, { client: id, removed: true }, `removed client ${id} and its keys`);
  return EXIT.ok;
}

/** What `keys issue` is given: the access store, and how long the key works (else for good). */
export interface KeysIssueGiven extends StoreGiven {
  readonly expiresIn?: string | undefined;
}

/** `keys issue CN [--expires-in DURATION]`: a new API key, printed once; only its hash is stored. */
export async function keysIssue(id: string, values: KeysIssueGiven, io: Io): Promise<number> {
  const expiresIn = values.expiresIn;
  const lifetime = expiresIn === undefined ? null : usage(() => parseDuration(expiresIn, '--expires-in'));
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
  await withAccessStore(values.accessStore, io, async (store) => {
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

/** `keys list CN`: a client's keys, each active, expired or revoked. */
export async function keysList(id: string, values: StoreGiven, io: Io): Promise<number> {
  const list = await withAccessStore(values.accessStore, io, async (store) => {
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

/** `keys revoke KEY_ID`: the key stops working on the next request. */
export async function keysRevoke(keyId: string, values: StoreGiven, io: Io): Promise<number> {
  const done = await withAccessStore(values.accessStore, io, (store) =>
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

/** `certs revoke SERIAL [--client CN]`: one certificate refused, for one client or for every one. */
export async function certsRevoke(
  serialRaw: string,
  values: StoreGiven & { readonly client?: string | undefined },
  io: Io,
): Promise<number> {
  const serial = usage(() => CertificateSerial.parse(serialRaw));
  const clientId = values.client === undefined ? null : clientIdOf(values.client);
  await withAccessStore(values.accessStore, io, (store) =>
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

/** `grants list`: every on-behalf-of user's grants. */
export async function grantsList(values: StoreGiven, io: Io): Promise<number> {
  const all = await withAccessStore(values.accessStore, io, (store) => store.listGrants());
  report(
    io,
    values.json,
    all,
    all.length === 0 ? ['no grants'] : all.map((g) => `${g.email}  ${g.permissions.join(',')}`),
  );
  return EXIT.ok;
}

async function changeGrant(
  change: 'add' | 'remove',
  email: string,
  list: string,
  values: StoreGiven,
  io: Io,
): Promise<number> {
  if (!EMAIL.test(email)) throw new UsageError('EMAIL must be an e-mail address');
  const permissions = usage(() => parsePermissionList(list));
  await withAccessStore(values.accessStore, io, (store) =>
    change === 'add' ? store.addGrant(email, permissions) : store.removeGrant(email, permissions),
  );
  report(
    io,
    values.json,
    { email: email.toLowerCase(), [change === 'add' ? 'added' : 'removed']: permissions },
    `${change === 'add' ? 'granted' : 'removed'} ${permissions.join(', ')} ${change === 'add' ? 'to' : 'from'} ${email.toLowerCase()}`,
  );
  return EXIT.ok;
}

/** `grants add EMAIL P[,P...]`: permissions an on-behalf-of user's requests are widened by. */
export const grantsAdd = (email: string, list: string, values: StoreGiven, io: Io): Promise<number> =>
  changeGrant('add', email, list, values, io);

/** `grants remove EMAIL P[,P...]`: those permissions taken from the user's grants. */
export const grantsRemove = (email: string, list: string, values: StoreGiven, io: Io): Promise<number> =>
  changeGrant('remove', email, list, values, io);
