import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CrnFormat } from '../../src/domain/crn.js';
import { CaseFileError, loadCaseFile, parseCaseFile, parseCaseRecord } from '../../src/formats/case-file.js';
import { fixtureCases } from '../support/fixtures.js';
import { CaseMother } from '../support/mothers.js';

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof CaseFileError) return error.problems;
    throw error;
  }
  throw new Error('expected a CaseFileError');
}

describe('the shipped fixtures', () => {
  const cases = fixtureCases();

  it('hold at least 20 cases with unique crns, X123456 a full case', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
    expect(new Set(cases.map((c) => c.crn)).size).toBe(cases.length);
    const x = cases.find((c) => c.crn === 'X123456');
    expect(x?.personalDetails.preferredLanguage).not.toBeNull();
    expect(x?.personalDetails.personalCircumstances.length).toBeGreaterThan(1);
    expect(x?.personalDetails.disabilities.length).toBeGreaterThan(1);
    expect(x?.personalDetails.offenderPersonalityDisorder).not.toBeNull();
    expect(x?.homeOfficeInterest.exists).toBe(true);
    expect(x?.homeOfficeInterest.notes).toBeTruthy();
    expect(Object.values(x?.communityManager ?? {}).every((v) => v !== null)).toBe(true);
    expect(x?.communityManager?.name.middleName).not.toBeNull();
  });

  it('cover every shape the service must answer', () => {
    const some = (p: (c: (typeof cases)[number]) => boolean) => cases.some(p);
    const counts = (n: (c: (typeof cases)[number]) => number) => new Set(cases.map(n));
    expect(some((c) => c.personalDetails.preferredLanguage === null)).toBe(true);
    expect(some((c) => c.personalDetails.preferredLanguage !== null)).toBe(true);
    expect([...counts((c) => Math.min(c.personalDetails.personalCircumstances.length, 2))].sort()).toEqual([
      0, 1, 2,
    ]);
    expect([...counts((c) => Math.min(c.personalDetails.disabilities.length, 2))].sort()).toEqual([0, 1, 2]);
    expect(some((c) => c.personalDetails.offenderPersonalityDisorder === null)).toBe(true);
    expect(some((c) => c.personalDetails.offenderPersonalityDisorder !== null)).toBe(true);
    expect(some((c) => c.homeOfficeInterest.exists && c.homeOfficeInterest.notes !== null)).toBe(true);
    expect(some((c) => c.homeOfficeInterest.exists && c.homeOfficeInterest.notes === null)).toBe(true);
    expect(some((c) => !c.homeOfficeInterest.exists)).toBe(true);
    const managers = cases.map((c) => c.communityManager);
    expect(managers.some((m) => m === null)).toBe(true);
    expect(
      managers.some(
        (m) => m !== null && Object.values(m).every((v) => v !== null) && m.name.middleName !== null,
      ),
    ).toBe(true);
    expect(
      managers.some(
        (m) =>
          m !== null &&
          m.jobRole === null &&
          m.emailAddress === null &&
          m.officeName === null &&
          m.teamPhoneNumber === null &&
          m.name.middleName === null,
      ),
    ).toBe(true);
  });

  it('use only invented contact details: .example e-mails and the 01632 960xxx drama range', () => {
    for (const c of cases) {
      const m = c.communityManager;
      if (m?.emailAddress) expect(m.emailAddress).toMatch(/@[a-z.]+\.example$/);
      if (m?.teamPhoneNumber) expect(m.teamPhoneNumber).toMatch(/^01632 960\d{3}$/);
    }
  });
});

describe('parseCaseFile', () => {
  const valid = () => ({ cases: [CaseMother.full('X123456'), CaseMother.minimal('A000001')] });

  it('returns the cases, without the covers notes', () => {
    const file = valid();
    const [first] = parseCaseFile({ cases: [{ ...file.cases[0], covers: 'note' }] });
    expect(first).toStrictEqual(CaseMother.full('X123456'));
  });

  it('names the case and field of each problem', () => {
    const broken = structuredClone(valid());
    (broken.cases[0]!.personalDetails.disabilities as unknown[])[0] = { updatedAt: '2024-01-01T00:00:00' };
    delete (broken.cases[1]!.homeOfficeInterest as { notes?: unknown }).notes;
    const problems = problemsOf(() => parseCaseFile(broken));
    expect(problems.some((p) => p.startsWith('cases[0].personalDetails.disabilities[0].type'))).toBe(true);
    expect(problems.some((p) => p.startsWith('cases[0].personalDetails.disabilities[0].updatedAt'))).toBe(
      true,
    );
    expect(problems.some((p) => p.startsWith('cases[1].homeOfficeInterest.notes'))).toBe(true);
  });

  it('refuses unknown fields', () => {
    const file = valid();
    const problems = problemsOf(() =>
      parseCaseFile({ cases: [{ ...file.cases[0], dateOfBirth: '1990-01-01' }] }),
    );
    expect(problems.join()).toMatch(/dateOfBirth/);
  });

  it('refuses a crn outside the configured pattern, and duplicates', () => {
    const problems = problemsOf(() =>
      parseCaseFile({
        cases: [CaseMother.full('bad'), CaseMother.minimal('A000001'), CaseMother.minimal('A000001')],
      }),
    );
    expect(problems).toContain('cases[0].crn: "bad" it does not match the pattern ^[A-Z][0-9]{6}$');
    expect(problems).toContain('cases[2].crn: A000001 appears more than once');
    const strict = CrnFormat.of('^[A-Z]{2}[0-9]{4}$');
    expect(problemsOf(() => parseCaseFile(valid(), { crnFormat: strict }))).toHaveLength(2);
  });

  it('refuses date-times without an offset', () => {
    const record = CaseMother.full('X123456');
    const withLocal = {
      ...record,
      personalDetails: {
        ...record.personalDetails,
        disabilities: [
          { type: { code: 'VI', description: 'Visual Impairment' }, updatedAt: '2024-01-01 10:00' },
        ],
      },
    };
    expect(problemsOf(() => parseCaseFile({ cases: [withLocal] })).join()).toMatch(
      /disabilities\[0\]\.updatedAt/,
    );
  });
});

describe('parseCaseRecord', () => {
  it('reads one case as parseCaseFile reads each of a file, without its covers note', () => {
    const record = { ...CaseMother.full('X123456'), covers: 'note' };
    expect(parseCaseRecord(record)).toStrictEqual(parseCaseFile({ cases: [record] })[0]);
    expect(parseCaseRecord(CaseMother.minimal('A000001')).limitedAccess).toBeNull();
  });

  it('names the source and each field at fault, with no cases[] prefix', () => {
    const broken = structuredClone(CaseMother.full('X123456')) as unknown as Record<string, unknown>;
    delete broken.homeOfficeInterest;
    broken.dateOfBirth = '1990-01-01';
    let error: unknown;
    try {
      parseCaseRecord(broken, { source: 'cases/X123456.json' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CaseFileError);
    const { source, problems } = error as CaseFileError;
    expect(source).toBe('cases/X123456.json');
    expect(problems.some((p) => p.startsWith('homeOfficeInterest:'))).toBe(true);
    expect(problems.join()).toMatch(/dateOfBirth/);
  });

  it('refuses a crn outside the configured pattern', () => {
    expect(problemsOf(() => parseCaseRecord(CaseMother.full('bad')))).toEqual([
      'crn: "bad" it does not match the pattern ^[A-Z][0-9]{6}$',
    ]);
    const strict = CrnFormat.of('^[A-Z]{2}[0-9]{4}$');
    expect(problemsOf(() => parseCaseRecord(CaseMother.full('X123456'), { crnFormat: strict }))).toHaveLength(
      1,
    );
  });
});

describe('loadCaseFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says when a file is missing or not JSON', () => {
    expect(problemsOf(() => loadCaseFile(join(dir, 'missing.json')))).toEqual(['cannot be read (ENOENT)']);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"cases": [');
    expect(problemsOf(() => loadCaseFile(bad))[0]).toMatch(/^is not valid JSON/);
  });
});
