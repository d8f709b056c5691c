import type { LimitedAccess } from '../../domain/access/limited-access.js';
import type { Crn } from '../../domain/crn.js';
import type * as Case from '../../domain/types.js';
import type { CaseRepository, Held } from '../../ports/case-repository.js';
import { UnreadableRecordError } from '../../ports/store-errors.js';
import { parsedPart, storedObjectText } from '../shared/stored-json.js';
import { CASE_STORE_MIGRATIONS, PERSONAL_DETAILS_JSON } from './case-schema.js';
import { openReadOnlyStore, openWritableStore, reading, sqliteStore, transaction } from './database.js';
import type { SqlDatabase, SqliteDriver, SqlStatement } from './driver.js';

/**
 * Free text is read as JSON text (`json_quote`, `json_object`): a NUL inside a string is
 * then the escape `\u0000`, never a raw NUL, which `node:sqlite` would cut the string at.
 * Every driver returns the same bytes.
 */
/** Every row read carries the case's limited-access rules: JSON text, or null for none. */
interface CaseRules {
  limited_access: string | null;
}
interface InterestRow extends CaseRules {
  home_office_interest_exists: 0 | 1;
  /** JSON: a string or null. */
  notes_json: string;
}
/** One risk score of the case, or a row of nulls for a case held without any (LEFT JOIN). */
interface RiskRow extends CaseRules {
  completed_date: string | null;
  /** JSON string. */
  assessment_status_json: string;
  general_level: Case.ScoreLevel | null;
  general_score: number | null;
  violence_level: Case.ScoreLevel | null;
  violence_score: number | null;
  group_reconviction_level: Case.ScoreLevel | null;
  group_reconviction_score: number | null;
  rsr_level: Case.ScoreLevel | null;
  rsr_score: number | null;
  sexual_indecent_level: Case.ScoreLevel | null;
  sexual_contact_level: Case.ScoreLevel | null;
  sexual_indecent_score: number | null;
  sexual_contact_score: number | null;
}

/** The manager as JSON, keys in the order the API sends them. */
const MANAGER_JSON = `json_object(
  'name', json_object('forename', forename, 'middleName', middle_name, 'surname', surname),
  'pdu', pdu, 'jobRole', job_role, 'emailAddress', email_address, 'officeName', office_name,
  'teamPhoneNumber', team_phone_number)`;

export const CASE_STORE = sqliteStore('case store', CASE_STORE_MIGRATIONS, {
  // Version 4's column carries the case's rules: code before it would answer without them.
  usableFrom: 4,
  createHint: 'case-read cases import fixtures/cases.json --store sqlite:PATH',
});

/** What the errors of a record that cannot be read back name the store. */
const STORE = CASE_STORE.what;

/** A part of a case with its rules, as the port hands it on; rules that are not an object are refused. */
const held = <T>(value: T, row: CaseRules): Held<T> => ({
  value,
  limitedAccess:
    row.limited_access === null
      ? null
      : parsedPart<LimitedAccess>(row.limited_access, STORE, 'cases.limited_access', 'an object'),
});

/**
 * Reads cases from a SQLite file. `serve` opens it read-only: the service can never change
 * the data it reports. Statements are prepared once, when the store opens.
 */
export class SqliteCaseRepository implements CaseRepository {
  private readonly detailsStmt: SqlStatement<[string], { personal_details_json: string } & CaseRules>;
  private readonly detailsTextStmt: SqlStatement<
    [string],
    { personal_details_json: string; valid: 0 | 1 } & CaseRules
  >;
  private readonly hoiStmt: SqlStatement<[string], InterestRow>;
  private readonly managerStmt: SqlStatement<[string], { manager_json: string | null } & CaseRules>;
  private readonly riskStmt: SqlStatement<[string], RiskRow>;

  private readonly beginStmt: SqlStatement<[]>;
  private readonly endStmt: SqlStatement<[]>;

  private constructor(private readonly db: SqlDatabase) {
    this.beginStmt = db.prepare('BEGIN');
    this.endStmt = db.prepare('COMMIT');
    // The document is assembled when the case is written: a read is one lookup of text.
    // Every read is one statement, by primary key, and brings the case's rules with it.
    this.detailsStmt = db.prepare('SELECT personal_details_json, limited_access FROM cases WHERE crn = ?');
    // The text is sent as it is: SQLite checks it is JSON (json_valid, in C), which costs a
    // fraction of parsing it here.
    this.detailsTextStmt = db.prepare(
      'SELECT personal_details_json, json_valid(personal_details_json) AS valid, limited_access FROM cases WHERE crn = ?',
    );
    this.hoiStmt = db.prepare(
      'SELECT home_office_interest_exists, json_quote(home_office_interest_notes) AS notes_json, limited_access FROM cases WHERE crn = ?',
    );
    this.riskStmt = db.prepare(
      `SELECT c.limited_access, r.*, json_quote(r.assessment_status) AS assessment_status_json
         FROM cases AS c LEFT JOIN risk_scores AS r ON r.crn = c.crn
        WHERE c.crn = ? ORDER BY r.position`,
    );
    this.managerStmt = db.prepare(
      `SELECT c.limited_access, CASE WHEN m.crn IS NULL THEN NULL ELSE ${MANAGER_JSON} END AS manager_json
         FROM cases AS c LEFT JOIN community_managers AS m ON m.crn = c.crn WHERE c.crn = ?`,
    );
  }

  /** Opens an existing store read-only; it must be at the current schema version. */
  static openReadOnly(path: string, driver?: SqliteDriver): SqliteCaseRepository {
    return new SqliteCaseRepository(openReadOnlyStore(path, CASE_STORE, driver));
  }

  close(): void {
    this.endTurn();
    this.db.close();
  }

  /**
   * The reads of one event-loop turn share one read transaction, ended when the turn is
   * over: SQLite takes its shared lock and checks the file for changes once per turn
   * instead of once per read (two fcntl calls and an fstat each). A read sees the store as
   * it was at the start of its turn, never older. A writer (`cases import`, WAL) is not held
   * up by it; a checkpoint waits at most one turn.
   */
  private read<T>(run: () => T): T {
    return reading('case store', () => {
      if (!this.db.inTransaction) {
        this.beginStmt.run();
        setImmediate(this.endTurn);
      }
      return run();
    });
  }

  private readonly endTurn = (): void => {
    if (!this.db.isOpen || !this.db.inTransaction) return;
    try {
      this.endStmt.run();
    } catch {
      // A read transaction holds nothing to keep: give it up however it can be.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
    }
  };

  /** For readiness: throws when the store cannot be read. */
  ping(): void {
    this.db.prepare('SELECT 1 FROM cases LIMIT 1').get();
  }

  // Each read: the engine's work in read() (its failures a 503), what was read made into the
  // answer after it (a record that cannot be read back an UnreadableRecordError, a 500).
  async findPersonalDetails(crn: Crn): Promise<Held<Case.PersonalDetailsAndCircumstances> | undefined> {
    const row = this.read(() => this.detailsStmt.get(crn.value));
    return (
      row &&
      held(
        parsedPart<Case.PersonalDetailsAndCircumstances>(
          row.personal_details_json,
          STORE,
          'cases.personal_details_json',
          'an object',
        ),
        row,
      )
    );
  }

  async findPersonalDetailsText(
    crn: Crn,
  ): Promise<Held<Case.JsonText<Case.PersonalDetailsAndCircumstances>> | undefined> {
    const row = this.read(() => this.detailsTextStmt.get(crn.value));
    if (row === undefined) return undefined;
    if (row.valid !== 1) throw new UnreadableRecordError(STORE, 'cases.personal_details_json', 'not JSON');
    return held(storedObjectText(row.personal_details_json, STORE, 'cases.personal_details_json'), row);
  }

  async findHomeOfficeInterest(crn: Crn): Promise<Held<Case.HomeOfficeInterest> | undefined> {
    const row = this.read(() => this.hoiStmt.get(crn.value));
    if (row === undefined) return undefined;
    // json_quote made the notes' JSON: SQLite's own, never unreadable.
    return held(
      { exists: row.home_office_interest_exists === 1, notes: JSON.parse(row.notes_json) as string | null },
      row,
    );
  }

  async findRiskScores(crn: Crn): Promise<Held<Case.RiskPredictorScore[]> | undefined> {
    const rows = this.read(() => this.riskStmt.all(crn.value));
    const [first] = rows;
    if (first === undefined) return undefined;
    const scored = rows.filter((r): r is RiskRow & { completed_date: string } => r.completed_date !== null);
    return held(
      scored.map((r) => ({
        completedDate: r.completed_date,
        assessmentStatus: JSON.parse(r.assessment_status_json) as string,
        generalPredictor: { scoreLevel: r.general_level, score: r.general_score },
        violencePredictor: { scoreLevel: r.violence_level, score: r.violence_score },
        groupReconviction: { scoreLevel: r.group_reconviction_level, score: r.group_reconviction_score },
        riskOfSeriousRecidivism: { scoreLevel: r.rsr_level, score: r.rsr_score },
        sexualPredictor: {
          indecentScoreLevel: r.sexual_indecent_level,
          contactScoreLevel: r.sexual_contact_level,
          indecentScore: r.sexual_indecent_score,
          contactScore: r.sexual_contact_score,
        },
      })),
      first,
    );
  }

  async findCommunityManager(
    crn: Crn,
  ): Promise<Held<{ communityManager: Case.CommunityManager | null }> | undefined> {
    const row = this.read(() => this.managerStmt.get(crn.value));
    if (row === undefined) return undefined;
    // json_object made the manager's JSON: SQLite's own, never unreadable.
    const manager =
      row.manager_json === null ? null : (JSON.parse(row.manager_json) as Case.CommunityManager);
    return held({ communityManager: manager }, row);
  }
}

/**
 * Writes cases into a SQLite file: used by `case-read cases import` and `cases generate`,
 * never by `serve`. Opening it creates the file if needed, applies pending migrations and
 * turns on WAL. Every write is one transaction: a batch is stored whole or not at all.
 */
export class SqliteCaseWriter {
  private readonly deleteCase: SqlStatement<[string]>;
  private readonly insertCase: SqlStatement<unknown[]>;
  private readonly insertCircumstance: SqlStatement<unknown[]>;
  private readonly insertDisability: SqlStatement<unknown[]>;
  private readonly insertManager: SqlStatement<unknown[]>;
  private readonly insertRisk: SqlStatement<unknown[]>;
  private readonly countStmt: SqlStatement<[], { n: number }>;
  private readonly documentStmt: SqlStatement<[string]>;
  private readonly writeBatch: (records: readonly Case.CaseRecord[]) => void;

  private constructor(private readonly db: SqlDatabase) {
    this.deleteCase = db.prepare('DELETE FROM cases WHERE crn = ?');
    this.insertCase = db.prepare(
      `INSERT INTO cases (crn, preferred_language_code, preferred_language_desc, opd_status_code,
                          opd_status_desc, home_office_interest_exists, home_office_interest_notes,
                          limited_access)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertCircumstance = db.prepare(
      `INSERT INTO personal_circumstances (crn, position, type_code, type_desc, sub_type_code, sub_type_desc, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertDisability = db.prepare(
      'INSERT INTO disabilities (crn, position, type_code, type_desc, updated_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.insertManager = db.prepare(
      `INSERT INTO community_managers (crn, forename, middle_name, surname, pdu, job_role, email_address,
                                       office_name, team_phone_number)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertRisk = db.prepare(
      `INSERT INTO risk_scores (crn, position, completed_date, assessment_status, general_level, general_score,
         violence_level, violence_score, group_reconviction_level, group_reconviction_score, rsr_level, rsr_score,
         sexual_indecent_level, sexual_contact_level, sexual_indecent_score, sexual_contact_score)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.documentStmt = db.prepare(
      `UPDATE cases AS c SET personal_details_json = ${PERSONAL_DETAILS_JSON} WHERE c.crn = ?`,
    );
    this.countStmt = db.prepare('SELECT count(*) AS n FROM cases');
    this.writeBatch = (records) =>
      transaction(db, () => {
        for (const record of records) this.writeOne(record);
      });
  }

  /** Opens (creating if needed) and migrates a store for writing. */
  static open(path: string, driver?: SqliteDriver): SqliteCaseWriter {
    return new SqliteCaseWriter(openWritableStore(path, CASE_STORE, driver));
  }

  /** Stores the records in one transaction, replacing any case already held under the same crn. */
  write(records: readonly Case.CaseRecord[]): void {
    this.writeBatch(records);
  }

  count(): number {
    return this.countStmt.get()?.n ?? 0;
  }

  close(): void {
    // Without waiting for readers (a running service holds a snapshot for one event-loop
    // turn at a time): the checkpoint copies what it can now and the WAL is reused.
    this.db.exec('PRAGMA busy_timeout = 0; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA optimize');
    this.db.close();
  }

  private writeOne(record: Case.CaseRecord): void {
    const { crn, personalDetails: pd, homeOfficeInterest: hoi, communityManager: cm } = record;
    this.deleteCase.run(crn);
    this.insertCase.run(
      crn,
      pd.preferredLanguage?.code ?? null,
      pd.preferredLanguage?.description ?? null,
      pd.offenderPersonalityDisorder?.status.code ?? null,
      pd.offenderPersonalityDisorder?.status.description ?? null,
      hoi.exists ? 1 : 0,
      hoi.notes,
      record.limitedAccess === null ? null : JSON.stringify(record.limitedAccess),
    );
    pd.personalCircumstances.forEach((c, position) => {
      this.insertCircumstance.run(
        crn,
        position,
        c.type.code,
        c.type.description,
        c.subType.code,
        c.subType.description,
        c.updatedAt,
      );
    });
    pd.disabilities.forEach((d, position) => {
      this.insertDisability.run(crn, position, d.type.code, d.type.description, d.updatedAt);
    });
    record.riskScores.forEach((r, position) => {
      this.insertRisk.run(
        crn,
        position,
        r.completedDate,
        r.assessmentStatus,
        r.generalPredictor.scoreLevel,
        r.generalPredictor.score,
        r.violencePredictor.scoreLevel,
        r.violencePredictor.score,
        r.groupReconviction.scoreLevel,
        r.groupReconviction.score,
        r.riskOfSeriousRecidivism.scoreLevel,
        r.riskOfSeriousRecidivism.score,
        r.sexualPredictor.indecentScoreLevel,
        r.sexualPredictor.contactScoreLevel,
        r.sexualPredictor.indecentScore,
        r.sexualPredictor.contactScore,
      );
    });
    if (cm !== null) {
      this.insertManager.run(
        crn,
        cm.name.forename,
        cm.name.middleName,
        cm.name.surname,
        cm.pdu,
        cm.jobRole,
        cm.emailAddress,
        cm.officeName,
        cm.teamPhoneNumber,
      );
    }
    this.documentStmt.run(crn);
  }
}
