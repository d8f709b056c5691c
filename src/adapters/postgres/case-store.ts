import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { LimitedAccess } from '../../domain/access/limited-access.js';
import type { Crn } from '../../domain/crn.js';
import type * as Case from '../../domain/types.js';
import type { CaseRepository, Held } from '../../ports/case-repository.js';
import { type StoredShape, storedObjectText, storedPart } from '../shared/stored-json.js';
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
  // Version 2's column carries the case's rules: code before it would answer without them.
  usableFrom: 2,
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
    // Limited access (decisions §8): the case's rules, NULL for a case without rules (every
    // case held before). Read with every part of the case, in the same query.
    `
    ALTER TABLE cases ADD COLUMN limited_access JSON;
    `,
  ],
};

const READ = CASE_STORE.what;

/** What a json column holds, checked to have the shape the writer stores. */
const part =
  <T>(column: string, shape: StoredShape) =>
  (value: unknown): T =>
    storedPart<T>(value, READ, `cases.${column}`, shape);

/** Each json column's reader, made once. */
const PARTS = {
  personalDetails: part<Case.PersonalDetailsAndCircumstances>('personal_details', 'an object'),
  personalDetailsText: (value: unknown) => storedObjectText(value, READ, 'cases.personal_details'),
  homeOfficeInterest: part<Case.HomeOfficeInterest>('home_office_interest', 'an object'),
  communityManager: part<Case.CommunityManager | null>('community_manager', 'an object or null'),
  riskScores: part<Case.RiskPredictorScore[]>('risk_scores', 'an array'),
};

/** Reads cases from PostgreSQL: one query per read, by primary key, bringing the case's rules. */
export class PostgresCaseRepository implements CaseRepository {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * One part of the case as `read` makes it of what the column holds, and its rules checked to
   * have the shape the writer stores (a part edited beside the service is an
   * UnreadableRecordError, a 500; src/ports/store-errors.ts).
   */
  private async column<T>(name: string, read: (value: unknown) => T, crn: Crn): Promise<Held<T> | undefined> {
    const result = await onRequestPath(READ, () =>
      this.pool.query<{ value: unknown; limited_access: unknown }>({
        name: `case-${name.replace('::', '-')}`,
        text: `SELECT ${name} AS value, limited_access FROM cases WHERE crn = $1`,
        values: [crn.value],
      }),
    );
    const row = result.rows[0];
    return (
      row && {
        value: read(row.value),
        limitedAccess: storedPart<LimitedAccess | null>(
          row.limited_access,
          READ,
          'cases.limited_access',
          'an object or null',
        ),
      }
    );
  }

  async findPersonalDetails(crn: Crn): Promise<Held<Case.PersonalDetailsAndCircumstances> | undefined> {
    return this.column('personal_details', PARTS.personalDetails, crn);
  }

  async findPersonalDetailsText(
    crn: Crn,
  ): Promise<Held<Case.JsonText<Case.PersonalDetailsAndCircumstances>> | undefined> {
    // ::text keeps the json column's text as stored, unparsed (the column holds only JSON).
    return this.column('personal_details::text', PARTS.personalDetailsText, crn);
  }

  async findHomeOfficeInterest(crn: Crn): Promise<Held<Case.HomeOfficeInterest> | undefined> {
    return this.column('home_office_interest', PARTS.homeOfficeInterest, crn);
  }

  async findCommunityManager(
    crn: Crn,
  ): Promise<Held<{ communityManager: Case.CommunityManager | null }> | undefined> {
    const row = await this.column('community_manager', PARTS.communityManager, crn);
    return row && { value: { communityManager: row.value }, limitedAccess: row.limitedAccess };
  }

  async findRiskScores(crn: Crn): Promise<Held<Case.RiskPredictorScore[]> | undefined> {
    return this.column('risk_scores', PARTS.riskScores, crn);
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
        `${r.crn}\t${copyField(JSON.stringify(r.personalDetails))}\t${copyField(JSON.stringify(r.homeOfficeInterest))}\t${copyField(r.communityManager === null ? null : JSON.stringify(r.communityManager))}\t${copyField(JSON.stringify(r.riskScores))}\t${copyField(r.limitedAccess === null ? null : JSON.stringify(r.limitedAccess))}\n`,
    );
    await inTransaction(this.pool, {}, async (client) => {
      await client.query('DELETE FROM cases WHERE crn = ANY ($1::text[])', [unique.map((r) => r.crn)]);
      const copy = client.query(
        copyFrom(
          'COPY cases (crn, personal_details, home_office_interest, community_manager, risk_scores, limited_access) FROM STDIN',
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
