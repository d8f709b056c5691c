/**
 * The case store schema, as ordered migrations. `PRAGMA user_version` records how many have
 * been applied. Child rows are clustered by crn (WITHOUT ROWID, primary key (crn, position))
 * so one case's circumstances are read from adjacent pages, in the order they were stored.
 */
export const CASE_STORE_MIGRATIONS: readonly string[] = [
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
];

export const CASE_STORE_SCHEMA_VERSION = CASE_STORE_MIGRATIONS.length;
