import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { CrnFormat } from '../domain/crn.js';
import { type CaseRecord, SCORE_LEVELS } from '../domain/types.js';
import { StoreError } from '../ports/stores.js';

/**
 * The case file format: what `fixtures/cases.json` holds, what `case-read cases import`
 * reads, and what any store keeping cases as JSON may read (a file of many cases, or one
 * case record on its own: {@link parseCaseRecord}). Any adapter or command may import it; it
 * imports only the domain. It is parsed strictly: unknown fields, missing fields, an absent
 * optional value (it must be `null`), a date-time without an offset or a crn outside the
 * configured pattern all reject the whole file, naming the case and the field.
 */

/** How a case file or record is read: the name its errors give it, and the crn pattern. */
export interface CaseFileOptions {
  /** What the errors call it: a path, or `case file` when not given. */
  readonly source?: string;
  readonly crnFormat?: CrnFormat;
}

const text = (max: number) => z.string().max(max);
const codeAndDescription = z.strictObject({ code: text(100).min(1), description: text(500).min(1) });
const dateTime = z.iso.datetime({ offset: true });

const level = z.enum(SCORE_LEVELS).nullable();
const score = z.number().finite().nullable();
const levelled = z.strictObject({ scoreLevel: level, score });
const riskScoreSchema = z.strictObject({
  completedDate: dateTime,
  assessmentStatus: text(100).min(1),
  generalPredictor: levelled,
  violencePredictor: levelled,
  groupReconviction: levelled,
  riskOfSeriousRecidivism: levelled,
  sexualPredictor: z.strictObject({
    indecentScoreLevel: level,
    contactScoreLevel: level,
    indecentScore: score,
    contactScore: score,
  }),
});

/** A user named by a rule: an on-behalf-of e-mail address (compared without regard to case). */
const user = text(320).regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address');
const until = dateTime.nullable();
/** Limited access (decisions §8): every member present; `until` null for no end. */
const limitedAccessSchema = z.strictObject({
  exclusions: z.array(z.strictObject({ user, until })).max(10_000),
  exclusionMessage: text(1000).min(1).nullable(),
  restriction: z.strictObject({ users: z.array(user).max(10_000), until }).nullable(),
  restrictionMessage: text(1000).min(1).nullable(),
});

const caseRecordSchema = z.strictObject({
  crn: text(64),
  /** Free text saying which shape a fixture covers; not part of the case. */
  covers: text(500).optional(),
  personalDetails: z.strictObject({
    preferredLanguage: codeAndDescription.nullable(),
    personalCircumstances: z.array(
      z.strictObject({ type: codeAndDescription, subType: codeAndDescription, updatedAt: dateTime }),
    ),
    disabilities: z.array(z.strictObject({ type: codeAndDescription, updatedAt: dateTime })),
    offenderPersonalityDisorder: z.strictObject({ status: codeAndDescription }).nullable(),
  }),
  homeOfficeInterest: z.strictObject({ exists: z.boolean(), notes: text(10_000).nullable() }),
  communityManager: z
    .strictObject({
      name: z.strictObject({
        forename: text(200).min(1),
        middleName: text(200).nullable(),
        surname: text(200).min(1),
      }),
      pdu: text(200).min(1),
      jobRole: text(200).nullable(),
      emailAddress: text(320).nullable(),
      officeName: text(500).nullable(),
      teamPhoneNumber: text(50).nullable(),
    })
    .nullable(),
  riskScores: z.array(riskScoreSchema),
  /** Absent or null for a case without rules. */
  limitedAccess: limitedAccessSchema.nullable().optional(),
});

const caseFileSchema = z.strictObject({
  description: z.string().optional(),
  cases: z.array(caseRecordSchema),
});

/** A case file or record that cannot be used: nothing was loaded from it; the message names every problem found. */
export class CaseFileError extends StoreError {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}: ${problems.length} problem(s): ${problems.slice(0, 20).join('; ')}`);
    this.name = 'CaseFileError';
  }
}

function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`;
  }
  return out || '(root)';
}

const problemsOf = (error: z.ZodError) =>
  error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`);

/** A valid record's crn checked against the pattern, its `covers` note dropped. */
function caseOf(
  { covers: _covers, limitedAccess, ...record }: z.infer<typeof caseRecordSchema>,
  at: string,
  format: CrnFormat,
  problems: string[],
): CaseRecord {
  const problem = format.problemWith(record.crn);
  if (problem !== undefined) problems.push(`${at}crn: ${JSON.stringify(record.crn)} ${problem}`);
  return { ...record, limitedAccess: limitedAccess ?? null };
}

/** Validates parsed JSON as one case record (an element of a case file's `cases`). */
export function parseCaseRecord(json: unknown, options: CaseFileOptions = {}): CaseRecord {
  const source = options.source ?? 'case record';
  const parsed = caseRecordSchema.safeParse(json);
  if (!parsed.success) throw new CaseFileError(source, problemsOf(parsed.error));
  const problems: string[] = [];
  const record = caseOf(parsed.data, '', options.crnFormat ?? CrnFormat.default, problems);
  if (problems.length > 0) throw new CaseFileError(source, problems);
  return record;
}

/** Validates parsed JSON as a case file and returns its cases, without the `covers` notes. */
export function parseCaseFile(json: unknown, options: CaseFileOptions = {}): CaseRecord[] {
  const source = options.source ?? 'case file';
  const format = options.crnFormat ?? CrnFormat.default;
  const parsed = caseFileSchema.safeParse(json);
  if (!parsed.success) throw new CaseFileError(source, problemsOf(parsed.error));
  const problems: string[] = [];
  const seen = new Set<string>();
  const records = parsed.data.cases.map((data, index) => {
    const record = caseOf(data, `cases[${index}].`, format, problems);
    if (seen.has(record.crn)) problems.push(`cases[${index}].crn: ${record.crn} appears more than once`);
    seen.add(record.crn);
    return record;
  });
  if (problems.length > 0) throw new CaseFileError(source, problems);
  return records;
}

/** A case file's text (UTF-8 JSON), validated: its cases. */
export function parseCaseFileText(text: string, options: CaseFileOptions = {}): CaseRecord[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CaseFileError(options.source ?? 'case file', [
      `is not valid JSON: ${(error as Error).message}`,
    ]);
  }
  return parseCaseFile(json, options);
}

/** Reads and validates a case file from disk. */
export function loadCaseFile(path: string, options: { crnFormat?: CrnFormat } = {}): CaseRecord[] {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CaseFileError(path, [`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  return parseCaseFileText(raw, { ...options, source: path });
}
