import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { LimitedAccess } from '../domain/access/limited-access.js';
import { type CaseRecord, type CodeAndDescription, SCORE_LEVELS } from '../domain/types.js';

/**
 * A deterministic generator of synthetic cases, for load and scale testing. The same seed
 * and count always give the same cases (pure-rand's xoroshiro128+ stream, one per run; pure-rand 8's
 * `uniformInt` is 7's `unsafeUniformIntDistribution` renamed, so a seed gives the cases it gave before).
 * Every value is invented: names come from short lists of obviously fictitious words,
 * e-mails use the reserved `.example` domain, phone numbers the Ofcom drama range.
 *
 * Crns are `<letter><six digits>` from the index (A000000, A000001, … Z999999), so a
 * generated store holds at most {@link MAX_GENERATED_CASES} cases and matches the default
 * crn pattern.
 */
export const MAX_GENERATED_CASES = 26_000_000;

const cd = (code: string, description: string): CodeAndDescription => ({ code, description });
const LANGUAGES = [
  cd('ENG', 'English'),
  cd('WEL', 'Welsh'),
  cd('POL', 'Polish'),
  cd('ARA', 'Arabic'),
  cd('PAN', 'Punjabi'),
  cd('URD', 'Urdu'),
  cd('ROM', 'Romanian'),
  cd('SOM', 'Somali'),
];
const CIRCUMSTANCES: ReadonlyArray<readonly [CodeAndDescription, readonly CodeAndDescription[]]> = [
  [
    cd('EMP', 'Employment'),
    [cd('FT', 'Full-time Employed'), cd('PT', 'Part-time Employed'), cd('UNE', 'Unemployed')],
  ],
  [
    cd('ACC', 'Accommodation'),
    [
      cd('SET', 'Settled Accommodation'),
      cd('HOS', 'Approved Premises / Hostel'),
      cd('NFA', 'No Fixed Abode'),
    ],
  ],
  [cd('FAM', 'Family Circumstances'), [cd('CAR', 'Carer'), cd('DEP', 'Has Dependants')]],
  [cd('EDU', 'Education'), [cd('FE', 'Further Education')]],
  [cd('DEB', 'Finance and Debt'), [cd('ARR', 'Rent Arrears')]],
];
const DISABILITIES = [
  cd('VI', 'Visual Impairment'),
  cd('HI', 'Hearing Impairment'),
  cd('LD', 'Learning Difficulties'),
  cd('MI', 'Mobility Impairment'),
  cd('MH', 'Mental Health Condition'),
  cd('DX', 'Dyslexia'),
];
const OPD = [cd('OPD_IN', 'Screened in: meets the OPD pathway criteria'), cd('OPD_OUT', 'Screened out')];
const FORENAMES = ['Alex', 'Sam', 'Jordan', 'Taylor', 'Morgan', 'Riley', 'Casey', 'Jamie', 'Robin', 'Quinn'];
const SURNAMES = [
  'Testperson',
  'Example',
  'Sample',
  'Placeholder',
  'Fictional',
  'Synthetic',
  'Madeup',
  'Demo',
];
const PDUS = [
  'Synthetic North PDU',
  'Synthetic South PDU',
  'Synthetic East PDU',
  'Synthetic West PDU',
  'Synthetic London PDU',
  'Synthetic Wales PDU',
];
const ROLES = [
  'Probation Practitioner',
  'Senior Probation Officer',
  'Probation Services Officer',
  'Trainee Probation Officer',
];
const NOTES = [
  'Interest recorded at sentencing.',
  'Deportation order under review.',
  'Liaise with the Home Office before any change of address.',
];

/** 2015-01-01T00:00:00Z and a span of ten years, in seconds. */
const EPOCH_2015 = 1_420_070_400;
const TEN_YEARS = 315_576_000;

export function crnForIndex(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_GENERATED_CASES) {
    throw new RangeError(`case index must be 0..${MAX_GENERATED_CASES - 1}`);
  }
  return String.fromCharCode(65 + Math.floor(index / 1_000_000)) + String(index % 1_000_000).padStart(6, '0');
}

/** Every this many cases, one is limited access (the last of each run): 2% of a generated set. */
const LIMITED_EVERY = 50;

/**
 * The limited-access rules of the generated case at `index`, from the index alone (the
 * random sequence, and so every other generated value, is the same as without them). The
 * limited cases cycle through: an active exclusion, an active restriction to two users, an
 * ended exclusion with an active restriction, and both active. Users are synthetic:
 * `officer.N@probation.example`.
 */
function generatedLimitedAccess(index: number): LimitedAccess | null {
  if (index % LIMITED_EVERY !== LIMITED_EVERY - 1) return null;
  const officer = (n: number) => `officer.${n}@probation.example`;
  const exclusion = { user: officer(1), until: null };
  const restriction = { users: [officer(2), officer(3)], until: '2099-01-01T00:00:00Z' };
  const kind = Math.floor(index / LIMITED_EVERY) % 4;
  return {
    exclusions: kind === 1 ? [] : [kind === 2 ? { ...exclusion, until: '2020-01-01T00:00:00Z' } : exclusion],
    exclusionMessage: kind === 1 ? null : 'You are excluded from viewing this case.',
    restriction: kind === 0 ? null : restriction,
    restrictionMessage: kind === 0 ? null : 'This case is restricted.',
  };
}

/** Yields `count` synthetic cases for `seed`, in crn order; one in {@link LIMITED_EVERY} is limited access. */
export function* generateCases(count: number, seed: number): Generator<CaseRecord> {
  if (!Number.isInteger(count) || count < 0 || count > MAX_GENERATED_CASES) {
    throw new RangeError(`count must be a whole number 0..${MAX_GENERATED_CASES}`);
  }
  const rng = xoroshiro128plus(seed);
  const int = (min: number, max: number) => uniformInt(rng, min, max);
  const pick = <T>(list: readonly T[]): T => list[int(0, list.length - 1)] as T;
  const chance = (percent: number) => int(1, 100) <= percent;
  const dateTime = () =>
    `${new Date((EPOCH_2015 + int(0, TEN_YEARS)) * 1000).toISOString().slice(0, 19)}+00:00`;

  for (let index = 0; index < count; index++) {
    const crn = crnForIndex(index);
    const personalCircumstances = Array.from({ length: int(0, 4) }, () => {
      const [type, subTypes] = pick(CIRCUMSTANCES);
      return { type, subType: pick(subTypes), updatedAt: dateTime() };
    });
    const disabilities = Array.from({ length: int(0, 3) }, () => ({
      type: pick(DISABILITIES),
      updatedAt: dateTime(),
    }));
    const interest = chance(10);
    const riskScores = Array.from({ length: int(0, 3) }, () => {
      const levelled = () => ({
        scoreLevel: pick(SCORE_LEVELS),
        score: chance(80) ? int(0, 1000) / 10 : null,
      });
      return {
        completedDate: dateTime(),
        assessmentStatus: chance(90) ? 'COMPLETE' : 'LOCKED_INCOMPLETE',
        generalPredictor: levelled(),
        violencePredictor: levelled(),
        groupReconviction: levelled(),
        riskOfSeriousRecidivism: levelled(),
        sexualPredictor: chance(70)
          ? {
              indecentScoreLevel: 'NOT_APPLICABLE' as const,
              contactScoreLevel: 'NOT_APPLICABLE' as const,
              indecentScore: null,
              contactScore: null,
            }
          : {
              indecentScoreLevel: pick(SCORE_LEVELS),
              contactScoreLevel: pick(SCORE_LEVELS),
              indecentScore: int(0, 1000) / 10,
              contactScore: int(0, 1000) / 10,
            },
      };
    });
    const forename = pick(FORENAMES);
    const surname = pick(SURNAMES);
    const full = chance(50);
    yield {
      crn,
      personalDetails: {
        preferredLanguage: chance(80) ? pick(LANGUAGES) : null,
        personalCircumstances,
        disabilities,
        offenderPersonalityDisorder: chance(30) ? { status: pick(OPD) } : null,
      },
      homeOfficeInterest: { exists: interest, notes: interest && chance(50) ? pick(NOTES) : null },
      communityManager: chance(85)
        ? {
            name: { forename, middleName: chance(30) ? pick(FORENAMES) : null, surname },
            pdu: pick(PDUS),
            jobRole: full || chance(50) ? pick(ROLES) : null,
            emailAddress: full ? `${forename}.${surname}.${crn}@probation.example`.toLowerCase() : null,
            officeName: full ? `${pick(SURNAMES)} House` : null,
            teamPhoneNumber: full ? `01632 960${String(int(0, 999)).padStart(3, '0')}` : null,
          }
        : null,
      riskScores,
      limitedAccess: generatedLimitedAccess(index),
    };
  }
}
