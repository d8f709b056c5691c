/**
 * The SQL of the previous release, commit {@link PREVIOUS_RELEASE}, against its PostgreSQL and
 * SQLite stores: each store's migrations as that release ran them, the statements that build
 * a small store as that release wrote it (the seed), and every statement an instance of that
 * release sends while serving and that its operator commands send (the statements). A test
 * builds a store exactly as that release left it, or migrates one with the current code, and
 * replays these statements against it: a migration that is not expand-only (a column dropped,
 * renamed or made NOT NULL without a default, a table or a trigger gone) makes one fail.
 *
 * Rendered from that release's own code (its dist/, built from the commit), each text exactly
 * as it was sent after its template was filled in, and checked against the release running:
 * the texts it sent are these, save for what is listed below.
 *
 * NEVER EDIT THIS FILE to make a test pass: it records what a release that may still be
 * running does, and a statement changed here no longer proves anything. When a release is
 * made, it is replaced whole by that release's statements, rendered the same way.
 *
 * Left out, or given otherwise:
 * - Transaction control (BEGIN, BEGIN IMMEDIATE, COMMIT, ROLLBACK), PostgreSQL's
 *   `SELECT pg_advisory_xact_lock(hashtext($1))` and `CREATE SCHEMA IF NOT EXISTS <schema>` of
 *   migrate(), and SQLite's readiness `BEGIN IMMEDIATE; ROLLBACK` and writer close
 *   `PRAGMA busy_timeout = 0; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA optimize`: they touch no
 *   table. SQLite's connection pragmas are {@link PREVIOUS_SQLITE_CONNECTION}.
 * - PostgreSQL's `cases import` streamed `COPY cases (crn, personal_details,
 *   home_office_interest, community_manager, risk_scores, limited_access) FROM STDIN`; here it is
 *   the INSERT of the same columns with the same values.
 * - How the release recorded a store's version is in the seed (PostgreSQL: the
 *   `case_read_schema` table and its row; SQLite: `PRAGMA user_version`, set after each
 *   migration, here once to the count). Serving, it read PostgreSQL's as
 *   `SELECT version FROM <schema>.case_read_schema WHERE store = $1` (requireCurrent); the
 *   statements hold migrate()'s unqualified read, the same but for the schema.
 * - That release accepted only its own version: `serve` refused a case or access store at any
 *   other version and an audit store above its own, and its operator commands refused a store
 *   above theirs. These statements prove its SQL still works on a migrated store, not that
 *   the release would open one.
 *
 * Running them: the seed, then the statements, each once and in order, on a store built from
 * the migrations (the statements leave the seeded client, key, grant and case in place; they
 * append audit record 4 to the three seeded, so a second run fails on audit's primary key).
 * PostgreSQL placeholders are $1..$n, times ISO 8601 text; SQLite's are positional `?` (no
 * named parameters), times epoch milliseconds, flags 0/1, lists comma-separated. The audit
 * records are chained as that release chained them (seq 1..4 onto the genesis hash), and the
 * checkpoints are signed by the Ed25519 key whose 32-byte seed is 0x01 repeated (key id
 * UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4). The seeded key of `old-client` is
 * crs_oldclientkey0001_previous-release-0e1e0b0-old-client-secret-0001.
 */

/** The commit of the previous release. */
export const PREVIOUS_RELEASE = '0e1e0b0';

export interface PreviousStatement {
  readonly store: 'case store' | 'access store' | 'audit store';
  readonly kind: 'read' | 'write';
  /** Which command or request of that release sends it, and what it does here. */
  readonly what: string;
  /** Exactly as that release sent it. */
  readonly sql: string;
  /** Values that work on a store built from the migrations and the seed. */
  readonly params: readonly unknown[];
}

export interface PreviousEngine {
  /** Each store's migrations as that release ran them, in order; its version is their count. */
  readonly migrations: Readonly<Record<'case store' | 'access store' | 'audit store', readonly string[]>>;
  readonly seed: readonly PreviousStatement[];
  /** What an instance of that release runs while serving (and its operator commands). */
  readonly statements: readonly PreviousStatement[];
}

/**
 * What the previous release ran on every SQLite connection it wrote through (its
 * openWritableStore): foreign keys on, so deleting a case or a client removes its rows with it.
 * Run it on each connection before the seed and the statements.
 */
export const PREVIOUS_SQLITE_CONNECTION =
  'PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL';

const PG_VERSION_TABLE =
  'CREATE TABLE IF NOT EXISTS case_read_schema (store TEXT PRIMARY KEY, version INTEGER NOT NULL)';
const PG_VERSION_WRITE = `INSERT INTO case_read_schema (store, version) VALUES ($1, $2)
       ON CONFLICT (store) DO UPDATE SET version = excluded.version`;
const PG_VERSION_READ = 'SELECT version FROM case_read_schema WHERE store = $1';
const PG_REGCLASS = 'SELECT to_regclass($1) IS NOT NULL AS found';
const PG_CASE_INSERT =
  'INSERT INTO cases (crn, personal_details, home_office_interest, community_manager, risk_scores, limited_access) VALUES ($1, $2, $3, $4, $5, $6)';
const PG_UPSERT_CLIENT = `INSERT INTO clients (id, permissions, suspended, rate_limit, queue_arn, role_arn, obo_mode, obo_issuer, obo_jwks, obo_audience, obo_email_claim, redact, limited_access)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
   ON CONFLICT (id) DO UPDATE SET permissions = excluded.permissions, suspended = excluded.suspended, rate_limit = excluded.rate_limit, queue_arn = excluded.queue_arn, role_arn = excluded.role_arn, obo_mode = excluded.obo_mode, obo_issuer = excluded.obo_issuer, obo_jwks = excluded.obo_jwks, obo_audience = excluded.obo_audience, obo_email_claim = excluded.obo_email_claim, redact = excluded.redact, limited_access = excluded.limited_access`;
const PG_KEY_INSERT = `INSERT INTO api_keys (id, client_id, secret_hash, created_at, expires_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`;
const PG_REVOKE_CERTIFICATE = `INSERT INTO certificate_revocations (serial_number, client_id, revoked_at) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING`;
const PG_ADD_GRANT =
  'INSERT INTO user_grants (email, permission) SELECT $1, p FROM unnest($2::text[]) AS p ON CONFLICT DO NOTHING';
const PG_NOTE_CERTIFICATE = `
  INSERT INTO certificates_seen (client_id, serial_number, not_after, seen_at)
  SELECT clients.id, seen.serial_number, seen.not_after, seen.seen_at
  FROM (SELECT $1 AS client_id, $2 AS serial_number, $3::timestamptz AS not_after, $4::timestamptz AS seen_at) AS seen
  JOIN clients ON clients.id = seen.client_id
  WHERE true
  ON CONFLICT (client_id) DO UPDATE
    SET serial_number = excluded.serial_number, not_after = excluded.not_after, seen_at = excluded.seen_at`;
const PG_AUDIT_INSERT = `INSERT INTO audit (seq, at, request_id, client_id, certificate_serial, on_behalf_of, operation, crn, status, previous_hash, hash, version, problem, access)
         SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[],
                              $7::text[], $8::text[], $9::int[], $10::text[], $11::text[],
                              $12::int[], $13::text[], $14::text[])`;
const PG_HEAD_UPDATE = 'UPDATE audit_head SET seq = $1, hash = $2';
const PG_SAVE_CHECKPOINT = `INSERT INTO audit_checkpoints (seq, head, time, key_id, signature)
   VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`;
const SQLITE_USER_VERSION = 'PRAGMA user_version';
const SQLITE_INSERT_CASE = `INSERT INTO cases (crn, preferred_language_code, preferred_language_desc, opd_status_code,
                          opd_status_desc, home_office_interest_exists, home_office_interest_notes,
                          limited_access)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
const SQLITE_INSERT_CIRCUMSTANCE = `INSERT INTO personal_circumstances (crn, position, type_code, type_desc, sub_type_code, sub_type_desc, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`;
const SQLITE_INSERT_DISABILITY =
  'INSERT INTO disabilities (crn, position, type_code, type_desc, updated_at) VALUES (?, ?, ?, ?, ?)';
const SQLITE_INSERT_RISK_SCORE = `INSERT INTO risk_scores (crn, position, completed_date, assessment_status, general_level, general_score,
         violence_level, violence_score, group_reconviction_level, group_reconviction_score, rsr_level, rsr_score,
         sexual_indecent_level, sexual_contact_level, sexual_indecent_score, sexual_contact_score)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const SQLITE_INSERT_MANAGER = `INSERT INTO community_managers (crn, forename, middle_name, surname, pdu, job_role, email_address,
                                       office_name, team_phone_number)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const SQLITE_CASE_DOCUMENT = `UPDATE cases AS c SET personal_details_json = json_object(
  'preferredLanguage', CASE WHEN c.preferred_language_code IS NULL THEN NULL
    ELSE json_object('code', c.preferred_language_code, 'description', c.preferred_language_desc) END,
  'personalCircumstances', json((
    SELECT coalesce(json_group_array(json_object(
             'type', json_object('code', type_code, 'description', type_desc),
             'subType', json_object('code', sub_type_code, 'description', sub_type_desc),
             'updatedAt', updated_at)), json('[]'))
      FROM (SELECT * FROM personal_circumstances WHERE crn = c.crn ORDER BY position))),
  'disabilities', json((
    SELECT coalesce(json_group_array(json_object(
             'type', json_object('code', type_code, 'description', type_desc),
             'updatedAt', updated_at)), json('[]'))
      FROM (SELECT * FROM disabilities WHERE crn = c.crn ORDER BY position))),
  'offenderPersonalityDisorder', CASE WHEN c.opd_status_code IS NULL THEN NULL
    ELSE json_object('status', json_object('code', c.opd_status_code, 'description', c.opd_status_desc)) END
) WHERE c.crn = ?`;
const SQLITE_UPSERT_CLIENT = `INSERT INTO clients (id, permissions, suspended, rate_limit, queue_arn, role_arn, obo_mode, obo_issuer, obo_jwks, obo_audience, obo_email_claim, redact, limited_access)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
   ON CONFLICT (id) DO UPDATE SET permissions = excluded.permissions, suspended = excluded.suspended, rate_limit = excluded.rate_limit, queue_arn = excluded.queue_arn, role_arn = excluded.role_arn, obo_mode = excluded.obo_mode, obo_issuer = excluded.obo_issuer, obo_jwks = excluded.obo_jwks, obo_audience = excluded.obo_audience, obo_email_claim = excluded.obo_email_claim, redact = excluded.redact, limited_access = excluded.limited_access`;
const SQLITE_KEY_INSERT =
  'INSERT INTO api_keys (id, client_id, secret_hash, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)';
const SQLITE_REVOKE_CERTIFICATE =
  'INSERT OR IGNORE INTO certificate_revocations (serial_number, client_id, revoked_at) VALUES (?, ?, ?)';
const SQLITE_ADD_GRANT = 'INSERT OR IGNORE INTO user_grants (email, permission) VALUES (?, ?)';
const SQLITE_NOTE_CERTIFICATE = `
  INSERT INTO certificates_seen (client_id, serial_number, not_after, seen_at)
  SELECT clients.id, seen.serial_number, seen.not_after, seen.seen_at
  FROM (SELECT ? AS client_id, ? AS serial_number, ? AS not_after, ? AS seen_at) AS seen
  JOIN clients ON clients.id = seen.client_id
  WHERE true
  ON CONFLICT (client_id) DO UPDATE
    SET serial_number = excluded.serial_number, not_after = excluded.not_after, seen_at = excluded.seen_at`;
const SQLITE_AUDIT_INSERT =
  'INSERT INTO audit (seq, at, request_id, client_id, certificate_serial, on_behalf_of, operation, crn, status, previous_hash, hash, version, problem, access) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const SQLITE_SAVE_CHECKPOINT = `INSERT INTO audit_checkpoints (seq, head, time, key_id, signature)
   VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;

/** The previous release's SQL, by engine. */
export const PREVIOUS: { readonly postgres: PreviousEngine; readonly sqlite: PreviousEngine } = {
  postgres: {
    migrations: {
      'case store': [
        `
    CREATE TABLE cases (
      crn                   TEXT PRIMARY KEY,
      personal_details      JSON NOT NULL,
      home_office_interest  JSON NOT NULL,
      community_manager     JSON,            -- NULL when the case has none
      risk_scores           JSON NOT NULL
    );
    `,
        `
    ALTER TABLE cases ADD COLUMN limited_access JSON;
    `,
      ],
      'access store': [
        `
  CREATE TABLE clients (
    id                 TEXT PRIMARY KEY NOT NULL,
    permissions        TEXT[] NOT NULL,
    suspended          BOOLEAN NOT NULL DEFAULT false,
    rate_limit         TEXT,
    queue_arn          TEXT,
    role_arn           TEXT,
    obo_mode           TEXT NOT NULL DEFAULT 'forbidden' CHECK (obo_mode IN ('forbidden', 'optional', 'required')),
    obo_issuer         TEXT,
    obo_jwks           TEXT,
    obo_audience       TEXT,
    obo_email_claim    TEXT NOT NULL DEFAULT 'email'
  );
  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY NOT NULL,
    client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    secret_hash  TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
  );
  CREATE INDEX api_keys_by_client ON api_keys (client_id);
  CREATE TABLE user_grants (
    email       TEXT NOT NULL,
    permission  TEXT NOT NULL,
    PRIMARY KEY (email, permission)
  );
  CREATE TABLE certificate_revocations (
    serial_number  TEXT NOT NULL,
    client_id      TEXT NOT NULL DEFAULT '',
    revoked_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (serial_number, client_id)
  );

    CREATE FUNCTION case_read_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('case_read_access', TG_TABLE_SCHEMA); RETURN NULL; END $$;
    CREATE TRIGGER clients_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clients
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    CREATE TRIGGER user_grants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON user_grants
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    CREATE TRIGGER certificate_revocations_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON certificate_revocations
      FOR EACH STATEMENT EXECUTE FUNCTION case_read_access_changed();
    `,
        "ALTER TABLE clients ADD COLUMN redact TEXT[] NOT NULL DEFAULT '{}';",
        "ALTER TABLE clients ADD COLUMN limited_access TEXT NOT NULL DEFAULT 'deny' CHECK (limited_access IN ('deny', 'allow'));",
        `
  CREATE TABLE certificates_seen (
    client_id      TEXT PRIMARY KEY NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    serial_number  TEXT NOT NULL,
    not_after      TIMESTAMPTZ NOT NULL,
    seen_at        TIMESTAMPTZ NOT NULL
  );`,
      ],
      'audit store': [
        `
  CREATE TABLE audit (
    seq                 BIGINT PRIMARY KEY,
    at                  TIMESTAMPTZ NOT NULL,
    request_id          TEXT NOT NULL,
    client_id           TEXT NOT NULL,
    certificate_serial  TEXT NOT NULL,
    on_behalf_of        TEXT,
    operation           TEXT NOT NULL,
    crn                 TEXT,
    status              INTEGER NOT NULL,
    previous_hash       TEXT NOT NULL,
    hash                TEXT NOT NULL
  );
  CREATE INDEX audit_by_client ON audit (client_id, at);
  CREATE INDEX audit_by_crn ON audit (crn, at) WHERE crn IS NOT NULL;

    -- The chain head: one row, locked by each append transaction.
    CREATE TABLE audit_head (
      id    BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
      seq   BIGINT NOT NULL,
      hash  TEXT NOT NULL
    );
    INSERT INTO audit_head (seq, hash) VALUES (0, '0000000000000000000000000000000000000000000000000000000000000000');
    `,
        `
  ALTER TABLE audit ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE audit ADD COLUMN problem TEXT;
  ALTER TABLE audit ADD COLUMN access TEXT;
`,
        `
  CREATE TABLE audit_checkpoints (
    seq        BIGINT NOT NULL,
    head       TEXT NOT NULL,
    time       TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    signature  TEXT NOT NULL,
    PRIMARY KEY (seq, key_id, signature)
  );
`,
      ],
    },
    seed: [
      {
        store: 'case store',
        kind: 'write',
        what: "The version table, as the release's migrate() created it before any migration",
        sql: PG_VERSION_TABLE,
        params: [],
      },
      {
        store: 'case store',
        kind: 'write',
        what: "The case store's version, recorded as the release's migrate() did",
        sql: PG_VERSION_WRITE,
        params: ['case store', 2],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'Case X123456 of fixtures/cases.json (the release wrote it with COPY of these columns; this INSERT is the equivalent)',
        sql: PG_CASE_INSERT,
        params: [
          'X123456',
          '{"preferredLanguage":{"code":"ENG","description":"English"},"personalCircumstances":[{"type":{"code":"EMP","description":"Employment"},"subType":{"code":"FT","description":"Full-time Employed"},"updatedAt":"2024-03-01T10:15:00+00:00"},{"type":{"code":"ACC","description":"Accommodation"},"subType":{"code":"SET","description":"Settled Accommodation"},"updatedAt":"2024-06-12T09:00:00+01:00"},{"type":{"code":"FAM","description":"Family Circumstances"},"subType":{"code":"DEP","description":"Has Dependants"},"updatedAt":"2023-11-20T16:45:30+00:00"}],"disabilities":[{"type":{"code":"VI","description":"Visual Impairment"},"updatedAt":"2022-05-04T08:30:00+01:00"},{"type":{"code":"DX","description":"Dyslexia"},"updatedAt":"2023-01-17T14:00:00+00:00"}],"offenderPersonalityDisorder":{"status":{"code":"OPD_IN","description":"Screened in: meets the OPD pathway criteria"}}}',
          '{"exists":true,"notes":"Immigration enforcement notified; liaise with the Home Office before any change of address."}',
          '{"name":{"forename":"Alex","middleName":"Jordan","surname":"Testperson"},"pdu":"Synthetic North PDU","jobRole":"Probation Practitioner","emailAddress":"alex.testperson@probation.example","officeName":"Synthetic House, 1 Example Street","teamPhoneNumber":"01632 960001"}',
          '[{"completedDate":"2023-02-01T09:00:00+00:00","assessmentStatus":"COMPLETE","generalPredictor":{"scoreLevel":"MEDIUM","score":45.2},"violencePredictor":{"scoreLevel":"MEDIUM","score":22.6},"groupReconviction":{"scoreLevel":"MEDIUM","score":45.2},"riskOfSeriousRecidivism":{"scoreLevel":"MEDIUM","score":2.1},"sexualPredictor":{"indecentScoreLevel":"NOT_APPLICABLE","contactScoreLevel":"NOT_APPLICABLE","indecentScore":null,"contactScore":null}},{"completedDate":"2024-07-15T14:30:00+01:00","assessmentStatus":"COMPLETE","generalPredictor":{"scoreLevel":"HIGH","score":61},"violencePredictor":{"scoreLevel":"HIGH","score":30.5},"groupReconviction":{"scoreLevel":"HIGH","score":61},"riskOfSeriousRecidivism":{"scoreLevel":"HIGH","score":4.7},"sexualPredictor":{"indecentScoreLevel":"LOW","contactScoreLevel":"MEDIUM","indecentScore":1.2,"contactScore":3.4}},{"completedDate":"2024-07-15T13:45:00+00:00","assessmentStatus":"LOCKED_INCOMPLETE","generalPredictor":{"scoreLevel":"HIGH","score":60.5},"violencePredictor":{"scoreLevel":"HIGH","score":30.2},"groupReconviction":{"scoreLevel":"HIGH","score":60.5},"riskOfSeriousRecidivism":{"scoreLevel":"HIGH","score":4.6},"sexualPredictor":{"indecentScoreLevel":"NOT_APPLICABLE","contactScoreLevel":"NOT_APPLICABLE","indecentScore":null,"contactScore":null}}]',
          null,
        ],
      },
      {
        store: 'access store',
        kind: 'write',
        what: "The version table, as the release's migrate() created it before any migration",
        sql: PG_VERSION_TABLE,
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: "The access store's version, recorded as the release's migrate() did",
        sql: PG_VERSION_WRITE,
        params: ['access store', 4],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients add old-client (saveClient)',
        sql: PG_UPSERT_CLIENT,
        params: [
          'old-client',
          ['getCase', 'getHomeOfficeInterest', 'getCommunityManagerByCrn', 'getRiskScores'],
          false,
          null,
          null,
          null,
          'optional',
          'https://idp.example',
          'https://idp.example/jwks',
          'case-read',
          'email',
          ['communityManager.teamPhoneNumber'],
          'deny',
        ],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'keys issue old-client (addApiKey): key crs_oldclientkey0001_previous-release-0e1e0b0-old-client-secret-0001',
        sql: PG_KEY_INSERT,
        params: [
          'oldclientkey0001',
          'old-client',
          '96860ae405b5c87257b5c577343ffd13047af24649563fc346c45b1c232f67d5',
          '2026-11-01T08:00:00.000Z',
          '2027-11-01T08:00:00.000Z',
          null,
        ],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants add old.user@probation.example (addGrant)',
        sql: PG_ADD_GRANT,
        params: ['old.user@probation.example', ['getCase', 'getRiskScores']],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'certs revoke 0BADC0DE for old-client (revokeCertificate)',
        sql: PG_REVOKE_CERTIFICATE,
        params: ['0BADC0DE', 'old-client', '2026-11-01T07:00:00.000Z'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'serve: the certificate old-client presented (noteCertificate)',
        sql: PG_NOTE_CERTIFICATE,
        params: ['old-client', '0A1B2C3D', '2027-11-01T00:00:00.000Z', '2026-11-01T09:00:00.000Z'],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: "The version table, as the release's migrate() created it before any migration",
        sql: PG_VERSION_TABLE,
        params: [],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: "The audit store's version, recorded as the release's migrate() did",
        sql: PG_VERSION_WRITE,
        params: ['audit store', 3],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: audit records 1 to 3, one batch linked onto the genesis head (append)',
        sql: PG_AUDIT_INSERT,
        params: [
          [1, 2, 3],
          ['2026-11-01T09:01:00.000Z', '2026-11-01T09:02:00.000Z', '2026-11-01T09:03:00.000Z'],
          ['prev-request-1', 'prev-request-2', 'prev-request-3'],
          ['old-client', 'old-client', 'old-client'],
          ['0A1B2C3D', '0A1B2C3D', '0A1B2C3D'],
          [null, 'old.user@probation.example', null],
          ['getCase', 'getRiskScores', 'getCommunityManagerByCrn'],
          ['X123456', 'X123456', 'X123456'],
          [200, 200, 403],
          [
            '0000000000000000000000000000000000000000000000000000000000000000',
            '511acf6a81a747af81b9aecef65c22721f2bd6f47f622099538afdd1930a02ee',
            'd8d112aa4e6ab57577fd0ba7a9426afff35fcdcc857c3c2a8f55785260bdbf76',
          ],
          [
            '511acf6a81a747af81b9aecef65c22721f2bd6f47f622099538afdd1930a02ee',
            'd8d112aa4e6ab57577fd0ba7a9426afff35fcdcc857c3c2a8f55785260bdbf76',
            '59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73',
          ],
          [2, 2, 2],
          [null, null, 'permission-denied'],
          [null, null, null],
        ],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: the chain head moved to record 3 (append)',
        sql: PG_HEAD_UPDATE,
        params: [3, '59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73'],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: a signed checkpoint at record 3 (saveCheckpoint)',
        sql: PG_SAVE_CHECKPOINT,
        params: [
          3,
          '59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73',
          '2026-11-01T09:05:00.000Z',
          'UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4',
          'Trn62GubDhGUBEJQfypjks6xabDZzUCGexlxHyY6i-BN-3_da0iR12XI3LnbBa7g_pNBkObPTTs5wSr687vMCQ',
        ],
      },
    ],
    statements: [
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: startup, does the version table exist (requireCurrent; the release passed "<schema>.case_read_schema")',
        sql: PG_REGCLASS,
        params: ['case_read_schema'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'cases import: the recorded version, as migrate() read it (serve read it as "<schema>.case_read_schema" in requireCurrent and refused any version but 2)',
        sql: PG_VERSION_READ,
        params: ['case store'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: readiness ping of every PostgreSQL store pool',
        sql: 'SELECT 1',
        params: [],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: GET a case, personal details (findPersonalDetails)',
        sql: 'SELECT personal_details AS value, limited_access FROM cases WHERE crn = $1',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: GET a case, personal details as stored text (findPersonalDetailsText)',
        sql: 'SELECT personal_details::text AS value, limited_access FROM cases WHERE crn = $1',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: home office interest (findHomeOfficeInterest)',
        sql: 'SELECT home_office_interest AS value, limited_access FROM cases WHERE crn = $1',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: community manager (findCommunityManager)',
        sql: 'SELECT community_manager AS value, limited_access FROM cases WHERE crn = $1',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: risk scores (findRiskScores)',
        sql: 'SELECT risk_scores AS value, limited_access FROM cases WHERE crn = $1',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: "cases import: the batch's crns deleted first (PostgresCaseWriter.write)",
        sql: 'DELETE FROM cases WHERE crn = ANY ($1::text[])',
        params: [['L000001']],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import: case L000001 (limited access) written; the release sent COPY cases (crn, personal_details, home_office_interest, community_manager, risk_scores, limited_access) FROM STDIN, this INSERT is the equivalent',
        sql: PG_CASE_INSERT,
        params: [
          'L000001',
          '{"preferredLanguage":{"code":"ENG","description":"English"},"personalCircumstances":[{"type":{"code":"EMP","description":"Employment"},"subType":{"code":"FT","description":"Full-time Employed"},"updatedAt":"2024-03-01T10:15:00+00:00"},{"type":{"code":"ACC","description":"Accommodation"},"subType":{"code":"SET","description":"Settled Accommodation"},"updatedAt":"2024-06-12T09:00:00+01:00"},{"type":{"code":"FAM","description":"Family Circumstances"},"subType":{"code":"DEP","description":"Has Dependants"},"updatedAt":"2023-11-20T16:45:30+00:00"}],"disabilities":[{"type":{"code":"VI","description":"Visual Impairment"},"updatedAt":"2022-05-04T08:30:00+01:00"},{"type":{"code":"DX","description":"Dyslexia"},"updatedAt":"2023-01-17T14:00:00+00:00"}],"offenderPersonalityDisorder":{"status":{"code":"OPD_IN","description":"Screened in: meets the OPD pathway criteria"}}}',
          '{"exists":true,"notes":"Immigration enforcement notified; liaise with the Home Office before any change of address."}',
          '{"name":{"forename":"Alex","middleName":"Jordan","surname":"Testperson"},"pdu":"Synthetic North PDU","jobRole":"Probation Practitioner","emailAddress":"alex.testperson@probation.example","officeName":"Synthetic House, 1 Example Street","teamPhoneNumber":"01632 960001"}',
          '[{"completedDate":"2023-02-01T09:00:00+00:00","assessmentStatus":"COMPLETE","generalPredictor":{"scoreLevel":"MEDIUM","score":45.2},"violencePredictor":{"scoreLevel":"MEDIUM","score":22.6},"groupReconviction":{"scoreLevel":"MEDIUM","score":45.2},"riskOfSeriousRecidivism":{"scoreLevel":"MEDIUM","score":2.1},"sexualPredictor":{"indecentScoreLevel":"NOT_APPLICABLE","contactScoreLevel":"NOT_APPLICABLE","indecentScore":null,"contactScore":null}},{"completedDate":"2024-07-15T14:30:00+01:00","assessmentStatus":"COMPLETE","generalPredictor":{"scoreLevel":"HIGH","score":61},"violencePredictor":{"scoreLevel":"HIGH","score":30.5},"groupReconviction":{"scoreLevel":"HIGH","score":61},"riskOfSeriousRecidivism":{"scoreLevel":"HIGH","score":4.7},"sexualPredictor":{"indecentScoreLevel":"LOW","contactScoreLevel":"MEDIUM","indecentScore":1.2,"contactScore":3.4}},{"completedDate":"2024-07-15T13:45:00+00:00","assessmentStatus":"LOCKED_INCOMPLETE","generalPredictor":{"scoreLevel":"HIGH","score":60.5},"violencePredictor":{"scoreLevel":"HIGH","score":30.2},"groupReconviction":{"scoreLevel":"HIGH","score":60.5},"riskOfSeriousRecidivism":{"scoreLevel":"HIGH","score":4.6},"sexualPredictor":{"indecentScoreLevel":"NOT_APPLICABLE","contactScoreLevel":"NOT_APPLICABLE","indecentScore":null,"contactScore":null}}]',
          '{"exclusions":[{"user":"officer.a@probation.example","until":null}],"exclusionMessage":"You are excluded from viewing this case.","restriction":{"users":["officer.b@probation.example","officer.c@probation.example"],"until":null},"restrictionMessage":"This case is restricted."}',
        ],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'cases import: the count after (PostgresCaseWriter.count)',
        sql: 'SELECT count(*) AS n FROM cases',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: startup, does the version table exist (requireCurrent; the release passed "<schema>.case_read_schema")',
        sql: PG_REGCLASS,
        params: ['case_read_schema'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'clients and keys commands: the recorded version, as migrate() read it (serve read it as "<schema>.case_read_schema" in requireCurrent and refused any version but 4)',
        sql: PG_VERSION_READ,
        params: ['access store'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: the change listener (PostgresAccessDirectory.listen)',
        sql: 'LISTEN case_read_access',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: the calling client (findClient)',
        sql: 'SELECT * FROM clients WHERE id = $1',
        params: ['old-client'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: an API key by id (findApiKey)',
        sql: 'SELECT * FROM api_keys WHERE id = $1',
        params: ['oldclientkey0001'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: is the presented certificate revoked (isCertificateRevoked)',
        sql: "SELECT 1 FROM certificate_revocations WHERE serial_number = $1 AND client_id IN ('', $2) LIMIT 1",
        params: ['0BADC0DE', 'old-client'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: "serve: an on-behalf-of user's grants (grantsFor)",
        sql: 'SELECT permission FROM user_grants WHERE email = $1 ORDER BY permission',
        params: ['old.user@probation.example'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'serve: the certificate a client presented (noteCertificate)',
        sql: PG_NOTE_CERTIFICATE,
        params: ['old-client', '0A1B2C3D', '2027-11-01T00:00:00.000Z', '2026-11-03T09:00:00.000Z'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients add old-client-2 (saveClient)',
        sql: PG_UPSERT_CLIENT,
        params: [
          'old-client-2',
          ['getCase'],
          false,
          '100/1s',
          null,
          null,
          'forbidden',
          null,
          null,
          null,
          'email',
          [],
          'allow',
        ],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'clients list (listClients)',
        sql: 'SELECT * FROM clients ORDER BY id',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients suspend old-client-2 (setSuspended)',
        sql: 'UPDATE clients SET suspended = $1 WHERE id = $2',
        params: [true, 'old-client-2'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'keys issue: the client exists (addApiKey)',
        sql: 'SELECT 1 FROM clients WHERE id = $1',
        params: ['old-client-2'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'keys issue old-client-2 (addApiKey)',
        sql: PG_KEY_INSERT,
        params: [
          'oldclientkey0002',
          'old-client-2',
          '1a17e4b9eed3656588f27155c5531f8152eba19d7ed393e9bac3d56a7c04215d',
          '2026-11-02T08:00:00.000Z',
          null,
          null,
        ],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'keys list old-client (listApiKeys)',
        sql: 'SELECT * FROM api_keys WHERE client_id = $1 ORDER BY created_at, id',
        params: ['old-client'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'keys revoke oldclientkey0002 (revokeApiKey)',
        sql: `WITH revoked AS (UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL)
       SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = $1) AS found`,
        params: ['oldclientkey0002', '2026-11-03T08:00:00.000Z'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'certs revoke 0CAFE002 for old-client-2 (revokeCertificate)',
        sql: PG_REVOKE_CERTIFICATE,
        params: ['0CAFE002', 'old-client-2', '2026-11-03T07:00:00.000Z'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'certs list revoked (listCertificateRevocations)',
        sql: 'SELECT * FROM certificate_revocations ORDER BY revoked_at, serial_number',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'clients list: certificates seen (listCertificatesSeen)',
        sql: 'SELECT * FROM certificates_seen ORDER BY client_id',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants add another.user@probation.example (addGrant)',
        sql: PG_ADD_GRANT,
        params: ['another.user@probation.example', ['getCase', 'getRiskScores']],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants remove another.user@probation.example getRiskScores (removeGrant)',
        sql: 'DELETE FROM user_grants WHERE email = $1 AND permission = ANY ($2::text[])',
        params: ['another.user@probation.example', ['getRiskScores']],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'grants list (listGrants)',
        sql: 'SELECT email, permission FROM user_grants ORDER BY email, permission',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients remove old-client-2, its revocations with it (removeClient)',
        sql: `WITH revocations AS (DELETE FROM certificate_revocations WHERE client_id = $1),
            removed AS (DELETE FROM clients WHERE id = $1 RETURNING 1)
       SELECT count(*) > 0 AS removed FROM removed`,
        params: ['old-client-2'],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: startup, the recorded version, as migrate() read it (serve migrates the audit store, and refused any version above 3)',
        sql: PG_VERSION_READ,
        params: ['audit store'],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: readiness (ping)',
        sql: 'SELECT seq FROM audit_head',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: the chain head (head)',
        sql: 'SELECT seq, hash FROM audit_head',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: an append batch locks the head (write, in its transaction)',
        sql: 'SELECT seq, hash FROM audit_head FOR UPDATE',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: audit record 4 linked onto record 3 (write); columns as arrays',
        sql: PG_AUDIT_INSERT,
        params: [
          [4],
          ['2026-11-01T09:04:00.000Z'],
          ['prev-request-4'],
          ['old-client'],
          ['0A1B2C3D'],
          [null],
          ['getCase'],
          ['A999999'],
          [404],
          ['59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73'],
          ['fe1cb10aeeade20986c26ef5f1e9d37465877bee63f630cc6a223138c81476d4'],
          [2],
          ['case-not-found'],
          [null],
        ],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: the chain head moved to record 4 (write)',
        sql: PG_HEAD_UPDATE,
        params: [4, 'fe1cb10aeeade20986c26ef5f1e9d37465877bee63f630cc6a223138c81476d4'],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: the newest checkpoint (newestCheckpoint)',
        sql: 'SELECT * FROM audit_checkpoints ORDER BY seq DESC LIMIT 1',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: a signed checkpoint at record 4 (saveCheckpoint)',
        sql: PG_SAVE_CHECKPOINT,
        params: [
          4,
          'fe1cb10aeeade20986c26ef5f1e9d37465877bee63f630cc6a223138c81476d4',
          '2026-11-01T09:10:00.000Z',
          'UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4',
          'mZS_O1ANyNarlMts47x7M0UYoGilFKVjP4QfqE5z1V5QM6C-Foq6341xkcALhfRlyYR6ebELCdBBX89wMkQgAw',
        ],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit query, no filter (query)',
        sql: 'SELECT * FROM audit  ORDER BY seq LIMIT $1',
        params: [1000],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit query --client (query)',
        sql: 'SELECT * FROM audit WHERE client_id = $1 ORDER BY seq LIMIT $2',
        params: ['old-client', 50],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit query --client --crn --since (query)',
        sql: 'SELECT * FROM audit WHERE client_id = $1 AND crn = $2 AND at >= $3 ORDER BY seq LIMIT $4',
        params: ['old-client', 'X123456', '2026-11-01T00:00:00.000Z', 1000],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit verify: one page of the chain (verify)',
        sql: 'SELECT * FROM audit WHERE seq > $1 ORDER BY seq LIMIT $2',
        params: [0, 10000],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit verify: one page of the stored checkpoints (checkpoints)',
        sql: `SELECT * FROM audit_checkpoints
   WHERE (seq, key_id, signature) > ($1, $2, $3)
   ORDER BY seq, key_id, signature LIMIT $4`,
        params: [0, '', '', 1000],
      },
    ],
  },
  sqlite: {
    migrations: {
      'case store': [
        `
  CREATE TABLE cases (
    crn                          TEXT PRIMARY KEY NOT NULL,
    preferred_language_code      TEXT,
    preferred_language_desc      TEXT,
    opd_status_code              TEXT,
    opd_status_desc              TEXT,
    home_office_interest_exists  INTEGER NOT NULL CHECK (home_office_interest_exists IN (0, 1)),
    home_office_interest_notes   TEXT,
    CHECK ((preferred_language_code IS NULL) = (preferred_language_desc IS NULL)),
    CHECK ((opd_status_code IS NULL) = (opd_status_desc IS NULL))
  ) WITHOUT ROWID;

  CREATE TABLE personal_circumstances (
    crn               TEXT NOT NULL REFERENCES cases (crn) ON DELETE CASCADE,
    position          INTEGER NOT NULL,
    type_code         TEXT NOT NULL,
    type_desc         TEXT NOT NULL,
    sub_type_code     TEXT NOT NULL,
    sub_type_desc     TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    PRIMARY KEY (crn, position)
  ) WITHOUT ROWID;

  CREATE TABLE disabilities (
    crn         TEXT NOT NULL REFERENCES cases (crn) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    type_code   TEXT NOT NULL,
    type_desc   TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (crn, position)
  ) WITHOUT ROWID;

  CREATE TABLE community_managers (
    crn                TEXT PRIMARY KEY NOT NULL REFERENCES cases (crn) ON DELETE CASCADE,
    forename           TEXT NOT NULL,
    middle_name        TEXT,
    surname            TEXT NOT NULL,
    pdu                TEXT NOT NULL,
    job_role           TEXT,
    email_address      TEXT,
    office_name        TEXT,
    team_phone_number  TEXT
  ) WITHOUT ROWID;
  `,
        `
  CREATE TABLE risk_scores (
    crn                     TEXT NOT NULL REFERENCES cases (crn) ON DELETE CASCADE,
    position                INTEGER NOT NULL,
    completed_date          TEXT NOT NULL,
    assessment_status       TEXT NOT NULL,
    general_level           TEXT,
    general_score           REAL,
    violence_level          TEXT,
    violence_score          REAL,
    group_reconviction_level TEXT,
    group_reconviction_score REAL,
    rsr_level               TEXT,
    rsr_score               REAL,
    sexual_indecent_level   TEXT,
    sexual_contact_level    TEXT,
    sexual_indecent_score   REAL,
    sexual_contact_score    REAL,
    PRIMARY KEY (crn, position)
  ) WITHOUT ROWID;
  `,
        `
  ALTER TABLE cases ADD COLUMN personal_details_json TEXT;
  UPDATE cases AS c SET personal_details_json = json_object(
  'preferredLanguage', CASE WHEN c.preferred_language_code IS NULL THEN NULL
    ELSE json_object('code', c.preferred_language_code, 'description', c.preferred_language_desc) END,
  'personalCircumstances', json((
    SELECT coalesce(json_group_array(json_object(
             'type', json_object('code', type_code, 'description', type_desc),
             'subType', json_object('code', sub_type_code, 'description', sub_type_desc),
             'updatedAt', updated_at)), json('[]'))
      FROM (SELECT * FROM personal_circumstances WHERE crn = c.crn ORDER BY position))),
  'disabilities', json((
    SELECT coalesce(json_group_array(json_object(
             'type', json_object('code', type_code, 'description', type_desc),
             'updatedAt', updated_at)), json('[]'))
      FROM (SELECT * FROM disabilities WHERE crn = c.crn ORDER BY position))),
  'offenderPersonalityDisorder', CASE WHEN c.opd_status_code IS NULL THEN NULL
    ELSE json_object('status', json_object('code', c.opd_status_code, 'description', c.opd_status_desc)) END
);
  `,
        `
  ALTER TABLE cases ADD COLUMN limited_access TEXT CHECK (limited_access IS NULL OR json_valid(limited_access));
  `,
      ],
      'access store': [
        `
  CREATE TABLE clients (
    id                 TEXT PRIMARY KEY NOT NULL,
    permissions        TEXT NOT NULL,
    suspended          INTEGER NOT NULL DEFAULT 0 CHECK (suspended IN (0, 1)),
    rate_limit         TEXT,
    queue_arn          TEXT,
    role_arn           TEXT,
    obo_mode           TEXT NOT NULL DEFAULT 'forbidden' CHECK (obo_mode IN ('forbidden', 'optional', 'required')),
    obo_issuer         TEXT,
    obo_jwks           TEXT,
    obo_audience       TEXT,
    obo_email_claim    TEXT NOT NULL DEFAULT 'email'
  ) WITHOUT ROWID;
  CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY NOT NULL,
    client_id    TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    secret_hash  TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    revoked_at   INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX api_keys_by_client ON api_keys (client_id);
  CREATE TABLE user_grants (
    email       TEXT NOT NULL,
    permission  TEXT NOT NULL,
    PRIMARY KEY (email, permission)
  ) WITHOUT ROWID;
  CREATE TABLE certificate_revocations (
    serial_number  TEXT NOT NULL,
    client_id      TEXT NOT NULL DEFAULT '',
    revoked_at     INTEGER NOT NULL,
    PRIMARY KEY (serial_number, client_id)
  ) WITHOUT ROWID;
`,
        "ALTER TABLE clients ADD COLUMN redact TEXT NOT NULL DEFAULT '';",
        "ALTER TABLE clients ADD COLUMN limited_access TEXT NOT NULL DEFAULT 'deny' CHECK (limited_access IN ('deny', 'allow'));",
        `
  CREATE TABLE certificates_seen (
    client_id      TEXT PRIMARY KEY NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    serial_number  TEXT NOT NULL,
    not_after      INTEGER NOT NULL,
    seen_at        INTEGER NOT NULL
  ) WITHOUT ROWID;`,
      ],
      'audit store': [
        `
  CREATE TABLE audit (
    seq                 INTEGER PRIMARY KEY,
    at                  TEXT NOT NULL,
    request_id          TEXT NOT NULL,
    client_id           TEXT NOT NULL,
    certificate_serial  TEXT NOT NULL,
    on_behalf_of        TEXT,
    operation           TEXT NOT NULL,
    crn                 TEXT,
    status              INTEGER NOT NULL,
    previous_hash       TEXT NOT NULL,
    hash                TEXT NOT NULL
  );
  CREATE INDEX audit_by_client ON audit (client_id, at);
  CREATE INDEX audit_by_crn ON audit (crn, at) WHERE crn IS NOT NULL;
`,
        `
  ALTER TABLE audit ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE audit ADD COLUMN problem TEXT;
  ALTER TABLE audit ADD COLUMN access TEXT;
`,
        `
  CREATE TABLE audit_checkpoints (
    seq        INTEGER NOT NULL,
    head       TEXT NOT NULL,
    time       TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    signature  TEXT NOT NULL,
    PRIMARY KEY (seq, key_id, signature)
  );
`,
      ],
    },
    seed: [
      {
        store: 'case store',
        kind: 'write',
        what: "The case store's version, recorded as the release did after each migration",
        sql: 'PRAGMA user_version = 4',
        params: [],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: the case row',
        sql: SQLITE_INSERT_CASE,
        params: [
          'X123456',
          'ENG',
          'English',
          'OPD_IN',
          'Screened in: meets the OPD pathway criteria',
          1,
          'Immigration enforcement notified; liaise with the Home Office before any change of address.',
          null,
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: personal circumstance 0',
        sql: SQLITE_INSERT_CIRCUMSTANCE,
        params: ['X123456', 0, 'EMP', 'Employment', 'FT', 'Full-time Employed', '2024-03-01T10:15:00+00:00'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: personal circumstance 1',
        sql: SQLITE_INSERT_CIRCUMSTANCE,
        params: [
          'X123456',
          1,
          'ACC',
          'Accommodation',
          'SET',
          'Settled Accommodation',
          '2024-06-12T09:00:00+01:00',
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: personal circumstance 2',
        sql: SQLITE_INSERT_CIRCUMSTANCE,
        params: [
          'X123456',
          2,
          'FAM',
          'Family Circumstances',
          'DEP',
          'Has Dependants',
          '2023-11-20T16:45:30+00:00',
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: disability 0',
        sql: SQLITE_INSERT_DISABILITY,
        params: ['X123456', 0, 'VI', 'Visual Impairment', '2022-05-04T08:30:00+01:00'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: disability 1',
        sql: SQLITE_INSERT_DISABILITY,
        params: ['X123456', 1, 'DX', 'Dyslexia', '2023-01-17T14:00:00+00:00'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: risk score 0',
        sql: SQLITE_INSERT_RISK_SCORE,
        params: [
          'X123456',
          0,
          '2023-02-01T09:00:00+00:00',
          'COMPLETE',
          'MEDIUM',
          45.2,
          'MEDIUM',
          22.6,
          'MEDIUM',
          45.2,
          'MEDIUM',
          2.1,
          'NOT_APPLICABLE',
          'NOT_APPLICABLE',
          null,
          null,
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: risk score 1',
        sql: SQLITE_INSERT_RISK_SCORE,
        params: [
          'X123456',
          1,
          '2024-07-15T14:30:00+01:00',
          'COMPLETE',
          'HIGH',
          61,
          'HIGH',
          30.5,
          'HIGH',
          61,
          'HIGH',
          4.7,
          'LOW',
          'MEDIUM',
          1.2,
          3.4,
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: risk score 2',
        sql: SQLITE_INSERT_RISK_SCORE,
        params: [
          'X123456',
          2,
          '2024-07-15T13:45:00+00:00',
          'LOCKED_INCOMPLETE',
          'HIGH',
          60.5,
          'HIGH',
          30.2,
          'HIGH',
          60.5,
          'HIGH',
          4.6,
          'NOT_APPLICABLE',
          'NOT_APPLICABLE',
          null,
          null,
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: the community manager',
        sql: SQLITE_INSERT_MANAGER,
        params: [
          'X123456',
          'Alex',
          'Jordan',
          'Testperson',
          'Synthetic North PDU',
          'Probation Practitioner',
          'alex.testperson@probation.example',
          'Synthetic House, 1 Example Street',
          '01632 960001',
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import X123456 of fixtures/cases.json: the personal-details document assembled',
        sql: SQLITE_CASE_DOCUMENT,
        params: ['X123456'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: "The access store's version, recorded as the release did after each migration",
        sql: 'PRAGMA user_version = 4',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients add old-client (saveClient)',
        sql: SQLITE_UPSERT_CLIENT,
        params: [
          'old-client',
          'getCase,getHomeOfficeInterest,getCommunityManagerByCrn,getRiskScores',
          0,
          null,
          null,
          null,
          'optional',
          'https://idp.example',
          'https://idp.example/jwks',
          'case-read',
          'email',
          'communityManager.teamPhoneNumber',
          'deny',
        ],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'keys issue old-client (addApiKey): key crs_oldclientkey0001_previous-release-0e1e0b0-old-client-secret-0001',
        sql: SQLITE_KEY_INSERT,
        params: [
          'oldclientkey0001',
          'old-client',
          '96860ae405b5c87257b5c577343ffd13047af24649563fc346c45b1c232f67d5',
          1793520000000,
          1825056000000,
          null,
        ],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants add old.user@probation.example getCase (addGrant)',
        sql: SQLITE_ADD_GRANT,
        params: ['old.user@probation.example', 'getCase'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants add old.user@probation.example getRiskScores (addGrant)',
        sql: SQLITE_ADD_GRANT,
        params: ['old.user@probation.example', 'getRiskScores'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'certs revoke 0BADC0DE for old-client (revokeCertificate)',
        sql: SQLITE_REVOKE_CERTIFICATE,
        params: ['0BADC0DE', 'old-client', 1793516400000],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'serve: the certificate old-client presented (noteCertificate)',
        sql: SQLITE_NOTE_CERTIFICATE,
        params: ['old-client', '0A1B2C3D', 1825027200000, 1793523600000],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: "The audit store's version, recorded as the release did after each migration",
        sql: 'PRAGMA user_version = 3',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: audit record 1 (append)',
        sql: SQLITE_AUDIT_INSERT,
        params: [
          1,
          '2026-11-01T09:01:00.000Z',
          'prev-request-1',
          'old-client',
          '0A1B2C3D',
          null,
          'getCase',
          'X123456',
          200,
          '0000000000000000000000000000000000000000000000000000000000000000',
          '511acf6a81a747af81b9aecef65c22721f2bd6f47f622099538afdd1930a02ee',
          2,
          null,
          null,
        ],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: audit record 2 (append)',
        sql: SQLITE_AUDIT_INSERT,
        params: [
          2,
          '2026-11-01T09:02:00.000Z',
          'prev-request-2',
          'old-client',
          '0A1B2C3D',
          'old.user@probation.example',
          'getRiskScores',
          'X123456',
          200,
          '511acf6a81a747af81b9aecef65c22721f2bd6f47f622099538afdd1930a02ee',
          'd8d112aa4e6ab57577fd0ba7a9426afff35fcdcc857c3c2a8f55785260bdbf76',
          2,
          null,
          null,
        ],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: audit record 3 (append)',
        sql: SQLITE_AUDIT_INSERT,
        params: [
          3,
          '2026-11-01T09:03:00.000Z',
          'prev-request-3',
          'old-client',
          '0A1B2C3D',
          null,
          'getCommunityManagerByCrn',
          'X123456',
          403,
          'd8d112aa4e6ab57577fd0ba7a9426afff35fcdcc857c3c2a8f55785260bdbf76',
          '59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73',
          2,
          'permission-denied',
          null,
        ],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: a signed checkpoint at record 3 (saveCheckpoint)',
        sql: SQLITE_SAVE_CHECKPOINT,
        params: [
          3,
          '59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73',
          '2026-11-01T09:05:00.000Z',
          'UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4',
          'Trn62GubDhGUBEJQfypjks6xabDZzUCGexlxHyY6i-BN-3_da0iR12XI3LnbBa7g_pNBkObPTTs5wSr687vMCQ',
        ],
      },
    ],
    statements: [
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: startup, the version (openReadOnlyStore; the release refused any version but 4)',
        sql: SQLITE_USER_VERSION,
        params: [],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: readiness (ping)',
        sql: 'SELECT 1 FROM cases LIMIT 1',
        params: [],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: personal details, parsed or as text (findPersonalDetails, findPersonalDetailsText)',
        sql: 'SELECT personal_details_json, limited_access FROM cases WHERE crn = ?',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: home office interest (findHomeOfficeInterest)',
        sql: 'SELECT home_office_interest_exists, json_quote(home_office_interest_notes) AS notes_json, limited_access FROM cases WHERE crn = ?',
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: risk scores (findRiskScores)',
        sql: `SELECT c.limited_access, r.*, json_quote(r.assessment_status) AS assessment_status_json
         FROM cases AS c LEFT JOIN risk_scores AS r ON r.crn = c.crn
        WHERE c.crn = ? ORDER BY r.position`,
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'serve: community manager (findCommunityManager)',
        sql: `SELECT c.limited_access, CASE WHEN m.crn IS NULL THEN NULL ELSE json_object(
  'name', json_object('forename', forename, 'middleName', middle_name, 'surname', surname),
  'pdu', pdu, 'jobRole', job_role, 'emailAddress', email_address, 'officeName', office_name,
  'teamPhoneNumber', team_phone_number) END AS manager_json
         FROM cases AS c LEFT JOIN community_managers AS m ON m.crn = c.crn WHERE c.crn = ?`,
        params: ['X123456'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import: the case deleted first, its rows with it by ON DELETE CASCADE (writeOne)',
        sql: 'DELETE FROM cases WHERE crn = ?',
        params: ['L000001'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import L000001 (limited access; one row of each kind): the case row',
        sql: SQLITE_INSERT_CASE,
        params: [
          'L000001',
          'ENG',
          'English',
          'OPD_IN',
          'Screened in: meets the OPD pathway criteria',
          1,
          'Immigration enforcement notified; liaise with the Home Office before any change of address.',
          '{"exclusions":[{"user":"officer.a@probation.example","until":null}],"exclusionMessage":"You are excluded from viewing this case.","restriction":{"users":["officer.b@probation.example","officer.c@probation.example"],"until":null},"restrictionMessage":"This case is restricted."}',
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import L000001 (limited access; one row of each kind): personal circumstance 0',
        sql: SQLITE_INSERT_CIRCUMSTANCE,
        params: ['L000001', 0, 'EMP', 'Employment', 'FT', 'Full-time Employed', '2024-03-01T10:15:00+00:00'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import L000001 (limited access; one row of each kind): disability 0',
        sql: SQLITE_INSERT_DISABILITY,
        params: ['L000001', 0, 'VI', 'Visual Impairment', '2022-05-04T08:30:00+01:00'],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import L000001 (limited access; one row of each kind): risk score 0',
        sql: SQLITE_INSERT_RISK_SCORE,
        params: [
          'L000001',
          0,
          '2023-02-01T09:00:00+00:00',
          'COMPLETE',
          'MEDIUM',
          45.2,
          'MEDIUM',
          22.6,
          'MEDIUM',
          45.2,
          'MEDIUM',
          2.1,
          'NOT_APPLICABLE',
          'NOT_APPLICABLE',
          null,
          null,
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import L000001 (limited access; one row of each kind): the community manager',
        sql: SQLITE_INSERT_MANAGER,
        params: [
          'L000001',
          'Alex',
          'Jordan',
          'Testperson',
          'Synthetic North PDU',
          'Probation Practitioner',
          'alex.testperson@probation.example',
          'Synthetic House, 1 Example Street',
          '01632 960001',
        ],
      },
      {
        store: 'case store',
        kind: 'write',
        what: 'cases import L000001 (limited access; one row of each kind): the personal-details document assembled',
        sql: SQLITE_CASE_DOCUMENT,
        params: ['L000001'],
      },
      {
        store: 'case store',
        kind: 'read',
        what: 'cases import: the count after (count)',
        sql: 'SELECT count(*) AS n FROM cases',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: startup, the version (openReadOnlyStore; the release refused any version but 4)',
        sql: SQLITE_USER_VERSION,
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: has anything changed since (fresh)',
        sql: 'PRAGMA data_version',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: readiness (ping)',
        sql: 'SELECT 1 FROM clients LIMIT 1',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: the calling client (findClient); also clients keys issue',
        sql: 'SELECT * FROM clients WHERE id = ?',
        params: ['old-client'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: an API key by id (findApiKey); also keys issue and keys revoke',
        sql: 'SELECT * FROM api_keys WHERE id = ?',
        params: ['oldclientkey0001'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'serve: is the presented certificate revoked (isCertificateRevoked)',
        sql: "SELECT 1 AS found FROM certificate_revocations WHERE serial_number = ? AND client_id IN ('', ?) LIMIT 1",
        params: ['0BADC0DE', 'old-client'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: "serve: an on-behalf-of user's grants (grantsFor)",
        sql: 'SELECT permission FROM user_grants WHERE email = ? ORDER BY permission',
        params: ['old.user@probation.example'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'serve: the certificate a client presented (noteCertificate, through a writable connection of its own)',
        sql: SQLITE_NOTE_CERTIFICATE,
        params: ['old-client', '0A1B2C3D', 1825027200000, 1793696400000],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients add old-client-2 (saveClient)',
        sql: SQLITE_UPSERT_CLIENT,
        params: [
          'old-client-2',
          'getCase',
          0,
          '100/1s',
          null,
          null,
          'forbidden',
          null,
          null,
          null,
          'email',
          '',
          'allow',
        ],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'clients list (listClients)',
        sql: 'SELECT * FROM clients ORDER BY id',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients suspend old-client-2 (setSuspended)',
        sql: 'UPDATE clients SET suspended = ? WHERE id = ?',
        params: [1, 'old-client-2'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'keys issue old-client-2 (addApiKey)',
        sql: SQLITE_KEY_INSERT,
        params: [
          'oldclientkey0002',
          'old-client-2',
          '1a17e4b9eed3656588f27155c5531f8152eba19d7ed393e9bac3d56a7c04215d',
          1793606400000,
          null,
          null,
        ],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'keys list old-client (listApiKeys)',
        sql: 'SELECT * FROM api_keys WHERE client_id = ? ORDER BY created_at, id',
        params: ['old-client'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'keys revoke oldclientkey0002 (revokeApiKey)',
        sql: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
        params: [1793692800000, 'oldclientkey0002'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'certs revoke 0CAFE002 for old-client-2 (revokeCertificate)',
        sql: SQLITE_REVOKE_CERTIFICATE,
        params: ['0CAFE002', 'old-client-2', 1793689200000],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'clients list: certificates seen (listCertificatesSeen)',
        sql: 'SELECT * FROM certificates_seen ORDER BY client_id',
        params: [],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'certs list revoked (listCertificateRevocations)',
        sql: 'SELECT * FROM certificate_revocations ORDER BY revoked_at, serial_number',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants add another.user@probation.example getCase (addGrant, one statement per permission)',
        sql: SQLITE_ADD_GRANT,
        params: ['another.user@probation.example', 'getCase'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'grants remove another.user@probation.example getCase (removeGrant, one statement per permission)',
        sql: 'DELETE FROM user_grants WHERE email = ? AND permission = ?',
        params: ['another.user@probation.example', 'getCase'],
      },
      {
        store: 'access store',
        kind: 'read',
        what: 'grants list (listGrants)',
        sql: 'SELECT email, permission FROM user_grants ORDER BY email, permission',
        params: [],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients remove old-client-2: its revocations (removeClient)',
        sql: 'DELETE FROM certificate_revocations WHERE client_id = ?',
        params: ['old-client-2'],
      },
      {
        store: 'access store',
        kind: 'write',
        what: 'clients remove old-client-2: the client, its keys and certificate seen with it by ON DELETE CASCADE (removeClient)',
        sql: 'DELETE FROM clients WHERE id = ?',
        params: ['old-client-2'],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: startup, the version (openWritableStore; the release refused any version above 3)',
        sql: SQLITE_USER_VERSION,
        params: [],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: the chain head (head; also read by each append batch under BEGIN IMMEDIATE)',
        sql: 'SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: audit record 4 linked onto record 3 (append)',
        sql: SQLITE_AUDIT_INSERT,
        params: [
          4,
          '2026-11-01T09:04:00.000Z',
          'prev-request-4',
          'old-client',
          '0A1B2C3D',
          null,
          'getCase',
          'A999999',
          404,
          '59189524983eefef74d5a6dbf39cf2659b01f2837e4d7de3aa43bc6b0956fc73',
          'fe1cb10aeeade20986c26ef5f1e9d37465877bee63f630cc6a223138c81476d4',
          2,
          'case-not-found',
          null,
        ],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'serve: the newest checkpoint (newestCheckpoint)',
        sql: 'SELECT * FROM audit_checkpoints ORDER BY seq DESC LIMIT 1',
        params: [],
      },
      {
        store: 'audit store',
        kind: 'write',
        what: 'serve: a signed checkpoint at record 4 (saveCheckpoint)',
        sql: SQLITE_SAVE_CHECKPOINT,
        params: [
          4,
          'fe1cb10aeeade20986c26ef5f1e9d37465877bee63f630cc6a223138c81476d4',
          '2026-11-01T09:10:00.000Z',
          'UDDReOZl1ipXAfp9wYsm13sDBMK5og--QWdBjzuf6o4',
          'mZS_O1ANyNarlMts47x7M0UYoGilFKVjP4QfqE5z1V5QM6C-Foq6341xkcALhfRlyYR6ebELCdBBX89wMkQgAw',
        ],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit query, no filter (query)',
        sql: 'SELECT * FROM audit  ORDER BY seq LIMIT ?',
        params: [1000],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit query --client (query)',
        sql: 'SELECT * FROM audit WHERE client_id = ? ORDER BY seq LIMIT ?',
        params: ['old-client', 50],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit query --client --crn --since (query)',
        sql: 'SELECT * FROM audit WHERE client_id = ? AND crn = ? AND at >= ? ORDER BY seq LIMIT ?',
        params: ['old-client', 'X123456', '2026-11-01T00:00:00.000Z', 1000],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit verify: one page of the chain (verify)',
        sql: 'SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?',
        params: [0, 10000],
      },
      {
        store: 'audit store',
        kind: 'read',
        what: 'audit verify: one page of the stored checkpoints (checkpoints)',
        sql: `SELECT * FROM audit_checkpoints
   WHERE (seq, key_id, signature) > (?, ?, ?)
   ORDER BY seq, key_id, signature LIMIT ?`,
        params: [0, '', '', 1000],
      },
    ],
  },
};
