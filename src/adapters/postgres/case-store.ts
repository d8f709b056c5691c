import type pg from 'pg';
import type { Crn } from '../../domain/crn.js';
import type {
  CaseRecord,
  CommunityManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from '../../domain/types.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { onRequestPath, type PostgresStoreDescription } from './database.js';

/**
 * The case store schema. One row per case, each part of the case as the JSON document the
 * service answers with, in `json` (not `jsonb`) columns: the text is kept exactly as
 * written (key order, escapes such as \u0000 that jsonb refuses), and every read is one
 * primary-key lookup returning one column.
 */
export const CASE_STORE: PostgresStoreDescription = {
  what: 'case store',
  createHint: 'case-read cases import FILE --store postgres://…',
  migrations: [
    `
    CREATE TABLE cases (
      crn                   TEXT PRIMARY KEY,
      personal_details      JSON NOT NULL,
      home_office_interest  JSON NOT NULL,
      community_manager     JSON,
      risk_scores           JSON NOT NULL
    );
    `,
  ],
};

const READ = 'case store';

/** Reads cases from PostgreSQL: one query per read, by primary key. */
export class PostgresCaseRepository implements CaseRepository {
  constructor(private readonly pool: pg.Pool) {}

  private async column<T>(name: string, crn: Crn): Promise<{ value: T } | undefined> {
    const result = await onRequestPath(READ, () =>
      this.pool.query<{ value: T }>({
        name: `case-${name}`,
        text: `SELECT ${name} AS value FROM cases WHERE crn = $1`,
        values: [crn.value],
      }),
    );
    return result.rows[0];
  }

  async findPersonalDetails(crn: Crn): Promise<PersonalDetailsAndCircumstances | undefined> {
    return (await this.column<PersonalDetailsAndCircumstances>('personal_details', crn))?.value;
  }

  async findHomeOfficeInterest(crn: Crn): Promise<HomeOfficeInterest | undefined> {
    return (await this.column<HomeOfficeInterest>('home_office_interest', crn))?.value;
  }

  async findCommunityManager(crn: Crn): Promise<{ communityManager: CommunityManager | null } | undefined> {
    const row = await this.column<CommunityManager | null>('community_manager', crn);
    return row && { communityManager: row.value };
  }

  async findRiskScores(crn: Crn): Promise<RiskPredictorScore[] | undefined> {
    return (await this.column<RiskPredictorScore[]>('risk_scores', crn))?.value;
  }
}

/**
 * Writes cases for `cases import` and `cases generate`: each batch is one statement over
 * arrays (`unnest`), replacing cases already held under the same crn, in one transaction.
 */
export class PostgresCaseWriter {
  constructor(private readonly pool: pg.Pool) {}

  async write(records: readonly CaseRecord[]): Promise<void> {
    if (records.length === 0) return;
    const columns: string[][] = [[], [], [], [], []];
    // The last occurrence of a crn wins, as it does when the same crn is written twice.
    const byCrn = new Map(records.map((r) => [r.crn, r]));
    for (const r of byCrn.values()) {
      columns[0]?.push(r.crn);
      columns[1]?.push(JSON.stringify(r.personalDetails));
      columns[2]?.push(JSON.stringify(r.homeOfficeInterest));
      columns[3]?.push(JSON.stringify(r.communityManager));
      columns[4]?.push(JSON.stringify(r.riskScores));
    }
    await this.pool.query(
      `INSERT INTO cases (crn, personal_details, home_office_interest, community_manager, risk_scores)
       SELECT crn, pd::json, hoi::json, NULLIF(cm, 'null')::json, rs::json
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(crn, pd, hoi, cm, rs)
       ON CONFLICT (crn) DO UPDATE SET personal_details = excluded.personal_details,
         home_office_interest = excluded.home_office_interest, community_manager = excluded.community_manager,
         risk_scores = excluded.risk_scores`,
      columns,
    );
  }

  async count(): Promise<number> {
    const result = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM cases');
    return Number(result.rows[0]?.n ?? 0);
  }
}
