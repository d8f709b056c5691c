import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Crn } from '../../domain/crn.js';
import type * as Case from '../../domain/types.js';
import type { CaseRepository } from '../../ports/case-repository.js';
import { inTransaction, onRequestPath, type PostgresStoreDescription } from './database.js';

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
      community_manager     JSON,            -- NULL when the case has none
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
        name: `case-${name.replace('::', '-')}`,
        text: `SELECT ${name} AS value FROM cases WHERE crn = $1`,
        values: [crn.value],
      }),
    );
    return result.rows[0];
  }

  async findPersonalDetails(crn: Crn): Promise<Case.PersonalDetailsAndCircumstances | undefined> {
    return (await this.column<Case.PersonalDetailsAndCircumstances>('personal_details', crn))?.value;
  }

  async findPersonalDetailsText(
    crn: Crn,
  ): Promise<Case.JsonText<Case.PersonalDetailsAndCircumstances> | undefined> {
    // ::text keeps the json column's text as stored, unparsed.
    return (await this.column<string>('personal_details::text', crn))?.value;
  }

  async findHomeOfficeInterest(crn: Crn): Promise<Case.HomeOfficeInterest | undefined> {
    return (await this.column<Case.HomeOfficeInterest>('home_office_interest', crn))?.value;
  }

  async findCommunityManager(
    crn: Crn,
  ): Promise<{ communityManager: Case.CommunityManager | null } | undefined> {
    const row = await this.column<Case.CommunityManager | null>('community_manager', crn);
    return row && { communityManager: row.value };
  }

  async findRiskScores(crn: Crn): Promise<Case.RiskPredictorScore[] | undefined> {
    return (await this.column<Case.RiskPredictorScore[]>('risk_scores', crn))?.value;
  }
}

/** One field of COPY's text format: backslashes doubled, SQL NULL as \N. */
const copyField = (text: string | null) => (text === null ? '\\N' : text.replaceAll('\\', '\\\\'));

/**
 * Writes cases for `cases import` and `cases generate`. Each batch is one transaction: the
 * cases already held under its crns are deleted, then the batch is streamed in with COPY
 * (the fastest way into PostgreSQL: no statement per row, no JSON re-parsing). So a crn
 * written again is replaced, and a batch is stored whole or not at all.
 */
export class PostgresCaseWriter {
  constructor(private readonly pool: pg.Pool) {}

  async write(records: readonly Case.CaseRecord[]): Promise<void> {
    if (records.length === 0) return;
    // The last occurrence of a crn wins (one INSERT … ON CONFLICT cannot touch a row twice).
    const unique = [...new Map(records.map((r) => [r.crn, r])).values()];
    // JSON.stringify escapes every control character, so a document never holds a raw tab
    // or newline: only backslashes need escaping for COPY.
    const lines = unique.map(
      (r) =>
        `${r.crn}\t${copyField(JSON.stringify(r.personalDetails))}\t${copyField(JSON.stringify(r.homeOfficeInterest))}\t${copyField(r.communityManager === null ? null : JSON.stringify(r.communityManager))}\t${copyField(JSON.stringify(r.riskScores))}\n`,
    );
    await inTransaction(this.pool, async (client) => {
      await client.query('DELETE FROM cases WHERE crn = ANY ($1::text[])', [unique.map((r) => r.crn)]);
      const copy = client.query(
        copyFrom(
          'COPY cases (crn, personal_details, home_office_interest, community_manager, risk_scores) FROM STDIN',
        ),
      );
      await pipeline(Readable.from(chunks(lines)), copy);
    });
  }

  async count(): Promise<number> {
    const result = await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM cases');
    return Number(result.rows[0]?.n ?? 0);
  }
}

/** Lines joined into chunks of about 1 MiB, so the stream is not one write per case. */
function* chunks(lines: readonly string[]): Generator<string> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length >= 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}
