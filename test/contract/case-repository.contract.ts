import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Crn } from '../../src/domain/crn.js';
import type { CaseRecord } from '../../src/domain/types.js';
import type { CaseRepository } from '../../src/ports/case-repository.js';
import { UnreadableRecordError } from '../../src/ports/store-errors.js';
import { StoreError } from '../../src/ports/stores.js';
import { fixtureCases } from '../support/fixtures.js';
import { CaseMother } from '../support/mothers.js';

/** What `damage` writes where a case's limited-access rules are held: valid JSON, the wrong shape. */
export const DAMAGED_RULES = JSON.stringify('everyone');

/**
 * A store under test, opened as `serve` opens it (through its store kind, where it has one).
 * Each clause of the store error convention (src/ports/store-errors.ts) the kind cannot be
 * put through is given as the reason instead of the function.
 */
export interface OpenedRepository {
  readonly repository: CaseRepository;
  /** The store's `ping`, as readiness calls it. */
  ping(): Promise<void>;
  /** The store's `close`, as shutdown calls it. */
  close(): Promise<void> | void;
  /** Removes what the test made for it (a schema, a directory, a stand-in upstream), after `close`. */
  cleanup?(): Promise<void> | void;
  /**
   * Makes the limited-access rules held for `crn` unreadable where they are stored: writes
   * {@link DAMAGED_RULES} (a JSON string where an object or null is held), as a hand edit or
   * another tool could leave them.
   */
  readonly damage: ((crn: string) => Promise<void> | void) | string;
}

/** Builds a repository holding exactly `records`. */
export type RepositoryFactory = (records: readonly CaseRecord[]) => Promise<OpenedRepository>;

/** Records beyond the fixtures that probe one clause of the contract each. */
function contractRecords(): CaseRecord[] {
  const unordered = CaseMother.full('K000001');
  return [
    {
      ...unordered,
      // Stored order is kept, even when it is not date or code order.
      personalDetails: {
        ...unordered.personalDetails,
        personalCircumstances: [
          {
            type: { code: 'ZZZ', description: 'Last code' },
            subType: { code: 'B', description: 'b' },
            updatedAt: '2025-01-01T00:00:00+00:00',
          },
          {
            type: { code: 'AAA', description: 'First code' },
            subType: { code: 'A', description: 'a' },
            updatedAt: '2001-01-01T00:00:00+00:00',
          },
          {
            type: { code: 'MMM', description: 'Middle' },
            subType: { code: 'C', description: 'c' },
            updatedAt: '2010-06-15T12:30:45.5-03:30',
          },
        ],
        disabilities: [
          {
            type: { code: 'MI', description: 'Mobility Impairment' },
            updatedAt: '2024-01-01T00:00:00+00:00',
          },
          { type: { code: 'DX', description: 'Dyslexia' }, updatedAt: '2020-01-01T00:00:00+00:00' },
        ],
      },
    },
    {
      ...CaseMother.minimal('K000002'),
      homeOfficeInterest: { exists: true, notes: '' },
      communityManager: CaseMother.fullManager({
        name: { forename: '李', middleName: '🙂', surname: "O'Brien\u0000x" },
      }),
    },
    {
      // An exclusion that has ended, another without end (user case kept as held).
      ...CaseMother.full('K000003'),
      limitedAccess: {
        exclusions: [
          { user: 'officer.a@probation.example', until: '2020-01-01T00:00:00Z' },
          { user: 'Officer.C@Probation.Example', until: null },
        ],
        exclusionMessage: 'You are excluded from viewing this case.',
        restriction: null,
        restrictionMessage: null,
      },
    },
    {
      // A restriction with several users and an end with offset and fraction; awkward text.
      ...CaseMother.withoutManager('K000004'),
      communityManager: CaseMother.fullManager(),
      limitedAccess: {
        exclusions: [],
        exclusionMessage: null,
        restriction: {
          users: [
            'officer.b@probation.example',
            'officer.d@probation.example',
            'officer.e@probation.example',
          ],
          until: '2099-12-31T23:59:59.5+01:00',
        },
        restrictionMessage: 'Restricted: "ask" the \\ owner\u0000.',
      },
    },
  ];
}

/**
 * The contract every CaseRepository adapter keeps (see src/ports/case-repository.ts).
 * Each adapter's test file calls this once with a factory for its own store.
 */
export function describeCaseRepositoryContract(
  name: string,
  factory: RepositoryFactory,
  options: {
    /**
     * The store decides limited access itself (the upstream system of record): it holds no
     * rules to hand on (`limitedAccess: null`) and refuses a limited case to a reader it
     * may not be shown to, here a client acting as itself.
     */
    readonly decidesLimitedAccess?: boolean;
    /**
     * Opens, as `serve` does, a store of this kind that does not exist (a file never made, a
     * schema never migrated); or the reason a store of the kind always exists.
     */
    readonly openMissing: (() => Promise<unknown>) | string;
  },
): void {
  const { decidesLimitedAccess = false, openMissing } = options;
  describe(`CaseRepository contract: ${name}`, () => {
    const all = [...fixtureCases(), ...contractRecords()];
    // A store that decides itself is read here by a client acting as itself: limited cases
    // are refused, so the data clauses are checked on the others.
    const records = decidesLimitedAccess ? all.filter((r) => r.limitedAccess === null) : all;
    let opened: OpenedRepository;
    let repository: CaseRepository;

    beforeAll(async () => {
      opened = await factory(all);
      repository = opened.repository;
    });
    afterAll(async () => {
      await opened.close();
      await opened.cleanup?.();
    });

    it('holds at least 20 fixture cases, including X123456', () => {
      expect(records.length).toBeGreaterThanOrEqual(decidesLimitedAccess ? 22 : 24);
      expect(records.some((r) => r.crn === 'X123456')).toBe(true);
    });

    it.each(records.map((r) => [r.crn, r] as const))(
      'answers %s exactly as stored, with its rules',
      async (crn, record) => {
        const key = Crn.parse(crn);
        const rules = record.limitedAccess;
        expect(await repository.findPersonalDetails(key)).toStrictEqual({
          value: record.personalDetails,
          limitedAccess: rules,
        });
        expect(await repository.findHomeOfficeInterest(key)).toStrictEqual({
          value: record.homeOfficeInterest,
          limitedAccess: rules,
        });
        expect(await repository.findCommunityManager(key)).toStrictEqual({
          value: { communityManager: record.communityManager },
          limitedAccess: rules,
        });
        expect((await repository.findRiskScores(key))?.limitedAccess).toStrictEqual(rules);
        if (repository.findPersonalDetailsText) {
          expect((await repository.findPersonalDetailsText(key))?.limitedAccess).toStrictEqual(rules);
        }
      },
    );

    it.runIf(decidesLimitedAccess)(
      'refuses a limited case to a client acting as itself, with the case message',
      async () => {
        await expect(repository.findHomeOfficeInterest(Crn.parse('K000003'))).rejects.toMatchObject({
          code: 'LIMITED_ACCESS',
          message: 'You are excluded from viewing this case.',
        });
        await expect(repository.findRiskScores(Crn.parse('K000004'))).rejects.toMatchObject({
          code: 'LIMITED_ACCESS',
        });
      },
    );

    it.skipIf(decidesLimitedAccess)(
      'keeps limited-access rules as held: an ended exclusion, a restriction with several users, and none',
      async () => {
        const limited = records.filter((r) => r.limitedAccess !== null);
        expect(limited.map((r) => r.crn)).toEqual(expect.arrayContaining(['K000003', 'K000004']));
        const ended = await repository.findHomeOfficeInterest(Crn.parse('K000003'));
        expect(ended?.limitedAccess?.exclusions).toStrictEqual([
          { user: 'officer.a@probation.example', until: '2020-01-01T00:00:00Z' },
          { user: 'Officer.C@Probation.Example', until: null },
        ]);
        const restricted = await repository.findCommunityManager(Crn.parse('K000004'));
        expect(restricted?.limitedAccess?.restriction).toStrictEqual({
          users: [
            'officer.b@probation.example',
            'officer.d@probation.example',
            'officer.e@probation.example',
          ],
          until: '2099-12-31T23:59:59.5+01:00',
        });
        expect(restricted?.limitedAccess?.restrictionMessage).toBe('Restricted: "ask" the \\ owner\u0000.');
        expect((await repository.findRiskScores(Crn.parse('X123456')))?.limitedAccess).toBeNull();
      },
    );

    it('offers the personal details as JSON text, when it does, parsing to exactly the same document', async ({
      skip,
    }) => {
      // Optional (reported skipped where not offered).
      if (!repository.findPersonalDetailsText) return skip();
      for (const record of records) {
        const text = (await repository.findPersonalDetailsText(Crn.parse(record.crn)))?.value;
        expect(JSON.parse(text ?? 'null'), record.crn).toStrictEqual(record.personalDetails);
      }
      expect(await repository.findPersonalDetailsText(Crn.parse('Q999998'))).toBeUndefined();
    });

    it('answers undefined, not an error, for a crn it does not hold', async () => {
      const unknown = Crn.parse('Q999998');
      expect(await repository.findPersonalDetails(unknown)).toBeUndefined();
      expect(await repository.findHomeOfficeInterest(unknown)).toBeUndefined();
      expect(await repository.findCommunityManager(unknown)).toBeUndefined();
      expect(await repository.findRiskScores(unknown)).toBeUndefined();
    });

    it('tells "no manager" ({ communityManager: null }) apart from "no case" (undefined)', async () => {
      const withoutManager = records.find((r) => r.communityManager === null);
      expect(withoutManager).toBeDefined();
      expect(
        (await repository.findCommunityManager(Crn.parse(withoutManager?.crn ?? '')))?.value,
      ).toStrictEqual({
        communityManager: null,
      });
    });

    it('sends null, never absent, for unknown optional values, and [] for empty lists', async () => {
      const details = (await repository.findPersonalDetails(Crn.parse('K000002')))?.value;
      expect(Object.keys(details ?? {}).sort()).toEqual([
        'disabilities',
        'offenderPersonalityDisorder',
        'personalCircumstances',
        'preferredLanguage',
      ]);
      expect(details?.preferredLanguage).toBeNull();
      expect(details?.personalCircumstances).toEqual([]);
      const interest = (await repository.findHomeOfficeInterest(Crn.parse('A000001')))?.value;
      expect(interest).toHaveProperty('notes', null);
    });

    it('answers [] for a held case with no risk assessments, and keeps their stored order', async () => {
      expect((await repository.findRiskScores(Crn.parse('K000002')))?.value).toStrictEqual([]);
      const dates = (await repository.findRiskScores(Crn.parse('K000001')))?.value.map(
        (r) => r.completedDate,
      );
      expect(dates).toEqual(['2024-05-01T10:00:00+01:00', '2023-01-15T09:30:00+00:00']);
    });

    it('keeps an empty string apart from null', async () => {
      expect((await repository.findHomeOfficeInterest(Crn.parse('K000002')))?.value).toStrictEqual({
        exists: true,
        notes: '',
      });
    });

    it('keeps lists in stored order', async () => {
      const details = (await repository.findPersonalDetails(Crn.parse('K000001')))?.value;
      expect(details?.personalCircumstances.map((c) => c.type.code)).toEqual(['ZZZ', 'AAA', 'MMM']);
      expect(details?.disabilities.map((d) => d.type.code)).toEqual(['MI', 'DX']);
    });

    it('returns date-times exactly as stored, offset and fraction included', async () => {
      const details = (await repository.findPersonalDetails(Crn.parse('K000001')))?.value;
      expect(details?.personalCircumstances[2]?.updatedAt).toBe('2010-06-15T12:30:45.5-03:30');
    });

    it('does not let a caller change what the next caller reads', async () => {
      const key = Crn.parse('X123456');
      const first = (await repository.findPersonalDetails(key))?.value;
      expect(first).toBeDefined();
      const answer = first as { personalCircumstances: unknown[]; preferredLanguage: unknown };
      try {
        answer.personalCircumstances.push('tampered');
        answer.preferredLanguage = null;
      } catch {
        // a frozen answer refuses the change; that also keeps the contract
      }
      const expected = records.find((r) => r.crn === 'X123456')?.personalDetails;
      expect((await repository.findPersonalDetails(key))?.value).toStrictEqual(expected);
    });

    it('answers many concurrent reads each with its own case', async () => {
      const sample = records.slice(0, 20);
      const answers = await Promise.all(
        sample.map(async (r) => (await repository.findHomeOfficeInterest(Crn.parse(r.crn)))?.value),
      );
      expect(answers).toStrictEqual(sample.map((r) => r.homeOfficeInterest));
    });
  });

  // The store error convention (src/ports/store-errors.ts), each clause on a store of its own.
  describe(`the store error convention: ${name}`, () => {
    const few = contractRecords();
    const notFor = (clause: unknown) => (typeof clause === 'string' ? ` (not for this kind: ${clause})` : '');

    it('ping resolves on an open store; close resolves, and a second close does nothing', async () => {
      const store = await factory(few);
      try {
        await expect(store.ping()).resolves.toBeUndefined();
        await store.close();
        await store.close();
      } finally {
        await store.cleanup?.();
      }
    });

    it.skipIf(typeof openMissing === 'string')(
      `refuses to open a store that does not exist, with a StoreError naming what to do${notFor(openMissing)}`,
      async () => {
        if (typeof openMissing === 'string') return;
        const refused = await openMissing().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toBeInstanceOf(StoreError);
        expect((refused as StoreError).message.length).toBeGreaterThan(20);
      },
    );

    it('a record it cannot read back is refused with UnreadableRecordError, naming the part, never the crn or value; the rest is read and ping resolves', async ({
      skip,
    }) => {
      const store = await factory(few);
      try {
        if (typeof store.damage === 'string') return skip(`not for this kind: ${store.damage}`);
        const [damaged, other] = few;
        if (damaged === undefined || other === undefined) throw new Error('two contract records needed');
        await store.damage(damaged.crn);
        const key = Crn.parse(damaged.crn);
        const { repository } = store;
        // One read at a time, each refusal caught where it is made.
        const reads: (() => Promise<unknown>)[] = [
          () => repository.findPersonalDetails(key),
          () => repository.findHomeOfficeInterest(key),
          () => repository.findCommunityManager(key),
          () => repository.findRiskScores(key),
          ...(repository.findPersonalDetailsText
            ? [async () => repository.findPersonalDetailsText?.(key)]
            : []),
        ];
        for (const read of reads) {
          const refused = await read().then(
            () => undefined,
            (error: unknown) => error,
          );
          expect(refused).toBeInstanceOf(UnreadableRecordError);
          const message = (refused as Error).message;
          expect(message).toMatch(/limited_?access/i);
          expect(message).not.toContain(damaged.crn);
          expect(message).not.toContain('everyone');
        }
        expect((await store.repository.findHomeOfficeInterest(Crn.parse(other.crn)))?.value).toStrictEqual(
          other.homeOfficeInterest,
        );
        await expect(store.ping()).resolves.toBeUndefined();
      } finally {
        await store.close();
        await store.cleanup?.();
      }
    });
  });
}
