/**
 * The personal-details document of the case aliased `c`, assembled by SQLite in the order
 * the API sends it. Computed when a case is written (and by migration 3 for stores written
 * before), so a read is one primary-key lookup of stored text.
 *
 * Each array comes out of a subquery, and whether a value keeps its JSON subtype across a
 * subquery differs between SQLite builds (Bun's own SQLite drops it, so the array would be
 * embedded as a quoted string). `json(…)` makes it JSON again: the same bytes on every driver.
 */
export const PERSONAL_DETAILS_JSON = `json_object(
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
)`;

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
  `
  ALTER TABLE cases ADD COLUMN personal_details_json TEXT;
  UPDATE cases AS c SET personal_details_json = ${PERSONAL_DETAILS_JSON};
  `,
  // Limited access (decisions §8): the case's rules as one JSON document, NULL for a case
  // without rules (every case held before). Read with every part of the case, in the same
  // statement: deciding costs no query of its own.
  `
  ALTER TABLE cases ADD COLUMN limited_access TEXT CHECK (limited_access IS NULL OR json_valid(limited_access));
  `,
];
