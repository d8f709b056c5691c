import type Database from 'better-sqlite3';
import type { Crn } from '../../domain/crn.js';
import type {
  CaseRecord,
  CommunityManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
  ScoreLevel,
} from '../../domain/types.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { StoreError } from '../../ports/stores.js';
import { openReadOnlyStore, openWritableStore, reading, type StoreDescription } from './database.js';
import { CASE_STORE_MIGRATIONS, PERSONAL_DETAILS_JSON } from './migrations.js';

/** The store cannot be opened or used as asked; the message says what to do. */
export class CaseStoreError extends StoreError {
  override readonly name = 'CaseStoreError';
}

interface InterestRow {
  home_office_interest_exists: 0 | 1;
  home_office_interest_notes: string | null;
}
interface RiskRow {
  completed_date: string;
  assessment_status: string;
  general_level: ScoreLevel | null;
  general_score: number | null;
  violence_level: ScoreLevel | null;
  violence_score: number | null;
  group_reconviction_level: ScoreLevel | null;
  group_reconviction_score: number | null;
  rsr_level: ScoreLevel | null;
  rsr_score: number | null;
  sexual_indecent_level: ScoreLevel | null;
  sexual_contact_level: ScoreLevel | null;
  sexual_indecent_score: number | null;
  sexual_contact_score: number | null;
}

interface ManagerRow {
  forename: string;
  middle_name: string | null;
  surname: string;
  pdu: string;
  job_role: string | null;
  email_address: string | null;
  office_name: string | null;
  team_phone_number: string | null;
}

const CASE_STORE: StoreDescription = {
  what: 'case store',
  migrations: CASE_STORE_MIGRATIONS,
  createHint: 'case-read cases import fixtures/cases.json --store sqlite:PATH',
  error: (message) => new CaseStoreError(message),
};

/**
 * Reads cases from a SQLite file. `serve` opens it read-only: the service can never change
 * the data it reports. Statements are prepared once, when the store opens.
 */
export class SqliteCaseRepository implements CaseRepository {
  private readonly detailsStmt: Database.Statement<[string], string>;
  private readonly hoiStmt: Database.Statement<[string], InterestRow>;
  private readonly existsStmt: Database.Statement<[string], { found: 1 }>;
  private readonly managerStmt: Database.Statement<[string], ManagerRow>;
  private readonly riskStmt: Database.Statement<[string], RiskRow>;

  private readonly beginStmt: Database.Statement;
  private readonly endStmt: Database.Statement;

  private constructor(private readonly db: Database.Database) {
    this.beginStmt = db.prepare('BEGIN');
    this.endStmt = db.prepare('COMMIT');
    // The document is assembled when the case is written: a read is one lookup of text.
    this.detailsStmt = db
      .prepare<[string], string>('SELECT personal_details_json FROM cases WHERE crn = ?')
      .pluck();
    this.hoiStmt = db.prepare(
      'SELECT home_office_interest_exists, home_office_interest_notes FROM cases WHERE crn = ?',
    );
    this.riskStmt = db.prepare('SELECT * FROM risk_scores WHERE crn = ? ORDER BY position');
    this.existsStmt = db.prepare('SELECT 1 AS found FROM cases WHERE crn = ?');
    this.managerStmt = db.prepare(
      `SELECT forename, middle_name, surname, pdu, job_role, email_address, office_name, team_phone_number
         FROM community_managers WHERE crn = ?`,
    );
  }

  /** Opens an existing store read-only; it must be at the current schema version. */
  static openReadOnly(path: string): SqliteCaseRepository {
    return new SqliteCaseRepository(openReadOnlyStore(path, CASE_STORE));
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
    if (!this.db.open || !this.db.inTransaction) return;
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

  async findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined> {
    return this.read(() => {
      const json = this.detailsStmt.get(crn.value);
      return json === undefined ? undefined : (JSON.parse(json) as PersonalDetailsAndCircumstances);
    });
  }

  async findPersonalDetailsText(crn: Crn): Promise<string | undefined> {
    return this.read(() => this.detailsStmt.get(crn.value));
  }

  async findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined> {
    return this.read(() => {
      const row = this.hoiStmt.get(crn.value);
      if (row === undefined) return undefined;
      return { exists: row.home_office_interest_exists === 1, notes: row.home_office_interest_notes };
    });
  }

  async findRiskScores(crn: Crn): Promise<RiskPredictorScore[] | undefined> {
    return this.read(() => {
      const rows = this.riskStmt.all(crn.value);
      if (rows.length === 0 && this.existsStmt.get(crn.value) === undefined) return undefined;
      return rows.map((r) => ({
        completedDate: r.completed_date,
        assessmentStatus: r.assessment_status,
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
      }));
    });
  }

  async findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined> {
    return this.read(() => {
      const row = this.managerStmt.get(crn.value);
      if (row === undefined) {
        return this.existsStmt.get(crn.value) === undefined ? undefined : { communityManager: null };
      }
      return {
        communityManager: {
          name: { forename: row.forename, middleName: row.middle_name, surname: row.surname },
          pdu: row.pdu,
          jobRole: row.job_role,
          emailAddress: row.email_address,
          officeName: row.office_name,
          teamPhoneNumber: row.team_phone_number,
        },
      };
    });
  }
}

/**
 * Writes cases into a SQLite file: used by `case-read cases import` and `cases generate`,
 * never by `serve`. Opening it creates the file if needed, applies pending migrations and
 * turns on WAL. Every write is one transaction: a batch is stored whole or not at all.
 */
export class SqliteCaseWriter {
  private readonly deleteCase: Database.Statement<[string]>;
  private readonly insertCase: Database.Statement<unknown[]>;
  private readonly insertCircumstance: Database.Statement<unknown[]>;
  private readonly insertDisability: Database.Statement<unknown[]>;
  private readonly insertManager: Database.Statement<unknown[]>;
  private readonly insertRisk: Database.Statement<unknown[]>;
  private readonly countStmt: Database.Statement<[], { n: number }>;
  private readonly documentStmt: Database.Statement<[string]>;
  private readonly writeBatch: (records: readonly CaseRecord[]) => void;

  private constructor(private readonly db: Database.Database) {
    this.deleteCase = db.prepare('DELETE FROM cases WHERE crn = ?');
    this.insertCase = db.prepare(
      `INSERT INTO cases (crn, preferred_language_code, preferred_language_desc, opd_status_code,
                          opd_status_desc, home_office_interest_exists, home_office_interest_notes)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
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
    this.writeBatch = db.transaction((records: readonly CaseRecord[]) => {
      for (const record of records) this.writeOne(record);
    });
  }

  /** Opens (creating if needed) and migrates a store for writing. */
  static open(path: string): SqliteCaseWriter {
    return new SqliteCaseWriter(openWritableStore(path, CASE_STORE));
  }

  /** Stores the records in one transaction, replacing any case already held under the same crn. */
  write(records: readonly CaseRecord[]): void {
    this.writeBatch(records);
  }

  count(): number {
    return this.countStmt.get()?.n ?? 0;
  }

  close(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.pragma('optimize');
    this.db.close();
  }

  private writeOne(record: CaseRecord): void {
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
