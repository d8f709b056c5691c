import type { LimitedAccessSetting } from '../../domain/access/limited-access.js';
import type { ApiKeyRecord, Client, OnBehalfOfMode } from '../../domain/access/model.js';
import { isPermission, type Permission } from '../../domain/access/permissions.js';
import { isRedactableField, type RedactableField } from '../../domain/access/redaction.js';
import type {
  CertificateRevocation,
  CertificateSeen,
  RenewalClaim,
  UserGrant,
} from '../../ports/access-directory.js';
import { StoreError } from '../../ports/stores.js';

/**
 * The access tables as both SQL stores lay them out, and the one mapping between their rows
 * and the domain's clients, keys and revocations. Each engine keeps its own encoding of a
 * list, a flag and a time (SQLite: comma-separated text, 0/1, epoch milliseconds;
 * PostgreSQL: TEXT[], BOOLEAN, TIMESTAMPTZ), handed in as a {@link SqlEncoding}.
 */

export interface SqlEncoding<List, Flag, Time> {
  readonly list: { read(value: List): readonly string[]; write(value: readonly string[]): List };
  readonly flag: { read(value: Flag): boolean; write(value: boolean): Flag };
  readonly time: { read(value: Time): Date; write(value: Date): Time };
}

export interface ClientRow<List, Flag> {
  readonly id: string;
  readonly permissions: List;
  readonly suspended: Flag;
  readonly rate_limit: string | null;
  readonly queue_arn: string | null;
  readonly role_arn: string | null;
  readonly obo_mode: OnBehalfOfMode;
  readonly obo_issuer: string | null;
  readonly obo_jwks: string | null;
  readonly obo_audience: string | null;
  readonly obo_email_claim: string;
  /** The fields withheld from the client (schema version 2). */
  readonly redact: List;
  /** What the client acting as itself gets on a limited case (schema version 3). */
  readonly limited_access: LimitedAccessSetting;
}

export interface KeyRow<Time> {
  readonly id: string;
  readonly client_id: string;
  readonly secret_hash: string;
  readonly created_at: Time;
  readonly expires_at: Time | null;
  readonly revoked_at: Time | null;
}

export interface RevocationRow<Time> {
  readonly serial_number: string;
  /** '' revokes for every client. */
  readonly client_id: string;
  readonly revoked_at: Time;
}

/** The engine's column types for what the access tables hold, and what ends each table (`WITHOUT ROWID`). */
export interface AccessTableTypes {
  readonly list: string;
  readonly flag: string;
  readonly time: string;
  readonly tableEnd: string;
}

/**
 * The four access tables as both SQL stores create them: clients, API keys (hashes only),
 * user grants (e-mails in lower case) and certificate revocations ('' revokes for every
 * client).
 */
export const accessTablesSql = ({ list, flag, time, tableEnd }: AccessTableTypes) => `
  CREATE TABLE clients (
    id                 TEXT PRIMARY KEY NOT NULL,
    permissions        ${list} NOT NULL,
    suspended          ${flag},
    rate_limit         TEXT,
    queue_arn          TEXT,
    role_arn           TEXT,
    obo_mode           TEXT NOT NULL DEFAULT 'forbidden' CHECK (obo_mode IN ('forbidden', 'optional', 'required')),
    obo_issuer         TEXT,
    obo_jwks           TEXT,
    obo_audience       TEXT,
    obo_email_claim    TEXT NOT NULL DEFAULT 'email'
  )${tableEnd};
  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY NOT NULL,
    client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    secret_hash  TEXT NOT NULL,
    created_at   ${time} NOT NULL,
    expires_at   ${time},
    revoked_at   ${time}
  )${tableEnd};
  CREATE INDEX api_keys_by_client ON api_keys (client_id);
  CREATE TABLE user_grants (
    email       TEXT NOT NULL,
    permission  TEXT NOT NULL,
    PRIMARY KEY (email, permission)
  )${tableEnd};
  CREATE TABLE certificate_revocations (
    serial_number  TEXT NOT NULL,
    client_id      TEXT NOT NULL DEFAULT '',
    revoked_at     ${time} NOT NULL,
    PRIMARY KEY (serial_number, client_id)
  )${tableEnd};
`;

/**
 * Schema version 2: the fields withheld from each client (data minimisation). Existing
 * clients withhold nothing.
 */
export const redactColumnSql = ({ list, emptyList }: { readonly list: string; readonly emptyList: string }) =>
  `ALTER TABLE clients ADD COLUMN redact ${list} NOT NULL DEFAULT ${emptyList};`;

/**
 * Schema version 4: the certificate each client last presented (for `clients list`),
 * written by the service; removed with its client.
 */
export const certificatesSeenTableSql = ({ time, tableEnd }: Pick<AccessTableTypes, 'time' | 'tableEnd'>) => `
  CREATE TABLE certificates_seen (
    client_id      TEXT PRIMARY KEY NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    serial_number  TEXT NOT NULL,
    not_after      ${time} NOT NULL,
    seen_at        ${time} NOT NULL
  )${tableEnd};`;

/**
 * Records a client's presented certificate, replacing the one before; nothing for a client
 * not held. `timeCast` types the two time parameters where the engine cannot tell (`::timestamptz`).
 */
export const noteCertificateSql = (p: (n: number) => string, timeCast = '') => `
  INSERT INTO certificates_seen (client_id, serial_number, not_after, seen_at)
  SELECT clients.id, seen.serial_number, seen.not_after, seen.seen_at
  FROM (SELECT ${p(1)} AS client_id, ${p(2)} AS serial_number, ${p(3)}${timeCast} AS not_after, ${p(4)}${timeCast} AS seen_at) AS seen
  JOIN clients ON clients.id = seen.client_id
  WHERE true
  ON CONFLICT (client_id) DO UPDATE
    SET serial_number = excluded.serial_number, not_after = excluded.not_after, seen_at = excluded.seen_at`;

export interface CertificateSeenRow<Time> {
  readonly client_id: string;
  readonly serial_number: string;
  readonly not_after: Time;
  readonly seen_at: Time;
}

/**
 * Schema version 5: the one renewal of each presented certificate (decisions §12), by its
 * serial, written by the service. A row is a claim; `issued_serial_number` is the certificate
 * issued for it (NULL while issuing, and the row goes if issuing fails). Not tied to the
 * clients table: a claim holds for ever, also after its client is removed and added again.
 */
export const certificateRenewalsTableSql = ({
  time,
  tableEnd,
}: Pick<AccessTableTypes, 'time' | 'tableEnd'>) => `
  CREATE TABLE certificate_renewals (
    serial_number         TEXT PRIMARY KEY NOT NULL,
    client_id             TEXT NOT NULL,
    claimed_at            ${time} NOT NULL,
    issued_serial_number  TEXT
  )${tableEnd};`;

/** Claims a certificate's renewal: one row inserted when this call claimed it, none when it was claimed before. */
export const claimRenewalSql = (p: (n: number) => string) => `
  INSERT INTO certificate_renewals (serial_number, client_id, claimed_at)
  VALUES (${p(1)}, ${p(2)}, ${p(3)})
  ON CONFLICT (serial_number) DO NOTHING`;

/**
 * Records the certificate issued for a claim: `p(1)` the issued serial, `p(2)` the presented
 * one (in the order they appear, for SQLite's `?`). The first one recorded stays.
 */
export const completeRenewalSql = (p: (n: number) => string) => `
  UPDATE certificate_renewals SET issued_serial_number = ${p(1)}
  WHERE serial_number = ${p(2)} AND issued_serial_number IS NULL`;

/** Releases a claim whose issuing failed, so the certificate may be renewed again; never one that issued. */
export const releaseRenewalSql = (p: (n: number) => string) => `
  DELETE FROM certificate_renewals WHERE serial_number = ${p(1)} AND issued_serial_number IS NULL`;

/**
 * Schema version 3: what each client acting as itself gets on a limited access case. Existing
 * clients are refused such cases (`deny`, the default of decisions §8).
 */
export const limitedAccessColumnSql = () =>
  `ALTER TABLE clients ADD COLUMN limited_access TEXT NOT NULL DEFAULT 'deny' CHECK (limited_access IN ('deny', 'allow'));`;

/**
 * The stored fields to withhold. A field this version does not know (written by a newer
 * one) cannot be withheld, so the client is not served: fails closed, never answers it.
 */
function withheldFields(clientId: string, stored: readonly string[]): RedactableField[] {
  const fields = stored.filter((field) => field !== '');
  const unknown = fields.find((field) => !isRedactableField(field));
  if (unknown !== undefined) {
    throw new StoreError(
      `access store: client ${clientId} has a field to withhold this version does not know (${JSON.stringify(unknown)})`,
    );
  }
  return fields.filter(isRedactableField);
}

/** The columns of `clients` and `api_keys`, in the order the row values below are given. */
export const CLIENT_COLUMNS = [
  'id',
  'permissions',
  'suspended',
  'rate_limit',
  'queue_arn',
  'role_arn',
  'obo_mode',
  'obo_issuer',
  'obo_jwks',
  'obo_audience',
  'obo_email_claim',
  'redact',
  'limited_access',
] as const;
export const KEY_COLUMNS = [
  'id',
  'client_id',
  'secret_hash',
  'created_at',
  'expires_at',
  'revoked_at',
] as const;

/**
 * The statements that write a whole client, with the engine's placeholders: `save`, `INSERT …
 * ON CONFLICT (id) DO UPDATE` (`saveClient`, which no command takes); `add`, a new client only,
 * no row changed when one with its id is held (`clients add`); `update`, every setting of the
 * client held with an id, given `clientUpdateValues` (the columns after `id`, then the id, in
 * that order for SQLite's `?`), which `clients update` runs on the row it read and locked.
 */
export function clientWritesSql(placeholder: (n: number) => string) {
  const insert = `INSERT INTO clients (${CLIENT_COLUMNS.join(', ')})
   VALUES (${CLIENT_COLUMNS.map((_, i) => placeholder(i + 1)).join(', ')})`;
  const settings = CLIENT_COLUMNS.slice(1);
  return {
    save: `${insert} ON CONFLICT (id) DO UPDATE SET ${settings.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    add: `${insert} ON CONFLICT (id) DO NOTHING`,
    update: `UPDATE clients SET ${settings.map((c, i) => `${c} = ${placeholder(i + 1)}`).join(', ')}
   WHERE id = ${placeholder(CLIENT_COLUMNS.length)}`,
  };
}

/** The row mapping for one engine's encoding. */
export function accessRows<List, Flag, Time>({ list, flag, time }: SqlEncoding<List, Flag, Time>) {
  const optionalTime = (value: Time | null) => (value === null ? null : time.read(value));
  /** A client's row values, in {@link CLIENT_COLUMNS} order. */
  const clientValues = (client: Client): unknown[] => [
    client.id,
    list.write(client.permissions),
    flag.write(client.suspended),
    client.rateLimit,
    client.queueArn,
    client.roleArn,
    client.onBehalfOf.mode,
    client.onBehalfOf.issuer,
    client.onBehalfOf.jwks,
    client.onBehalfOf.audience,
    client.onBehalfOf.emailClaim,
    list.write(client.redact),
    client.limitedAccess,
  ];
  return {
    toCertificateSeen: (row: CertificateSeenRow<Time>): CertificateSeen => ({
      clientId: row.client_id,
      serialNumber: row.serial_number,
      notAfter: time.read(row.not_after),
      seenAt: time.read(row.seen_at),
    }),
    /** A presented certificate's values for {@link noteCertificateSql}, in its order. */
    certificateSeenValues: (seen: CertificateSeen): unknown[] => [
      seen.clientId,
      seen.serialNumber,
      time.write(seen.notAfter),
      time.write(seen.seenAt),
    ],
    /** A renewal claim's values for {@link claimRenewalSql}, in its order. */
    renewalClaimValues: (claim: RenewalClaim): unknown[] => [
      claim.serialNumber,
      claim.clientId,
      time.write(claim.at),
    ],
    toClient: (row: ClientRow<List, Flag>): Client => ({
      id: row.id,
      permissions: list.read(row.permissions).filter(isPermission),
      suspended: flag.read(row.suspended),
      rateLimit: row.rate_limit,
      queueArn: row.queue_arn,
      roleArn: row.role_arn,
      onBehalfOf: {
        mode: row.obo_mode,
        issuer: row.obo_issuer,
        jwks: row.obo_jwks,
        audience: row.obo_audience,
        emailClaim: row.obo_email_claim,
      },
      redact: withheldFields(row.id, list.read(row.redact)),
      limitedAccess: row.limited_access,
    }),
    clientValues,
    /** A client's values for {@link clientWritesSql}'s `update`: its settings, then its id. */
    clientUpdateValues: (client: Client): unknown[] => {
      const [id, ...settings] = clientValues(client);
      return [...settings, id];
    },
    toKey: (row: KeyRow<Time>): ApiKeyRecord => ({
      id: row.id,
      clientId: row.client_id,
      secretHash: row.secret_hash,
      createdAt: time.read(row.created_at),
      expiresAt: optionalTime(row.expires_at),
      revokedAt: optionalTime(row.revoked_at),
    }),
    /** A key's row values, in {@link KEY_COLUMNS} order. */
    keyValues: (key: ApiKeyRecord): unknown[] => [
      key.id,
      key.clientId,
      key.secretHash,
      time.write(key.createdAt),
      key.expiresAt && time.write(key.expiresAt),
      key.revokedAt && time.write(key.revokedAt),
    ],
    toRevocation: (row: RevocationRow<Time>): CertificateRevocation => ({
      serialNumber: row.serial_number,
      clientId: row.client_id === '' ? null : row.client_id,
      revokedAt: time.read(row.revoked_at),
    }),
  };
}

/** Grant rows (`email`, `permission`, ordered by e-mail) as one grant per e-mail; unknown permissions are dropped. */
export function grantsOf(
  rows: readonly { readonly email: string; readonly permission: string }[],
): UserGrant[] {
  const byEmail = new Map<string, Permission[]>();
  for (const { email, permission } of rows) {
    if (!isPermission(permission)) continue;
    byEmail.set(email, [...(byEmail.get(email) ?? []), permission]);
  }
  return [...byEmail].map(([email, permissions]) => ({ email, permissions }));
}
