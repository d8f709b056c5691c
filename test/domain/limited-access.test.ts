import { describe, expect, it } from 'vitest';
import {
  decideLimitedAccess,
  GENERIC_EXCLUSION_MESSAGE,
  GENERIC_RESTRICTION_MESSAGE,
  isActive,
  type LimitedAccess,
  type LimitedAccessSetting,
  parseLimitedAccessSetting,
} from '../../src/domain/access/limited-access.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const PAST = '2026-06-01T11:59:59Z';
const FUTURE = '2026-06-01T12:00:01Z';

const A = 'officer.a@probation.example';
const B = 'officer.b@probation.example';
const C = 'officer.c@probation.example';

function rules(
  exclusion: 'none' | 'active' | 'ended',
  restriction: 'none' | 'active' | 'ended',
  messages = true,
): LimitedAccess {
  return {
    exclusions: exclusion === 'none' ? [] : [{ user: A, until: exclusion === 'active' ? null : PAST }],
    exclusionMessage: messages ? 'You are excluded from viewing this case.' : null,
    restriction:
      restriction === 'none' ? null : { users: [B, C], until: restriction === 'active' ? FUTURE : PAST },
    restrictionMessage: messages ? 'This case is restricted.' : null,
  };
}

const outcome = (r: LimitedAccess | null, user: string | null, setting: LimitedAccessSetting = 'deny') =>
  decideLimitedAccess(r, { user, limitedAccess: setting }, NOW).outcome;

describe('decideLimitedAccess: the decision table', () => {
  const states = ['none', 'active', 'ended'] as const;
  // Expected outcome for each reader, by (exclusion, restriction) state.
  // Readers: A (named by the exclusion), B (named by the restriction), D (named by neither),
  // no user under deny, no user under allow.
  const table: Record<string, [string, string, string, string, string]> = {
    'none/none': ['open', 'open', 'open', 'open', 'open'],
    'none/active': ['restricted', 'open', 'restricted', 'restricted', 'client-enforces'],
    'none/ended': ['open', 'open', 'open', 'open', 'open'],
    'active/none': ['excluded', 'open', 'open', 'excluded', 'client-enforces'],
    'active/active': ['excluded', 'open', 'restricted', 'restricted', 'client-enforces'],
    'active/ended': ['excluded', 'open', 'open', 'excluded', 'client-enforces'],
    'ended/none': ['open', 'open', 'open', 'open', 'open'],
    'ended/active': ['restricted', 'open', 'restricted', 'restricted', 'client-enforces'],
    'ended/ended': ['open', 'open', 'open', 'open', 'open'],
  };
  for (const exclusion of states) {
    for (const restriction of states) {
      const key = `${exclusion}/${restriction}`;
      it(`exclusion ${exclusion}, restriction ${restriction}`, () => {
        const r = rules(exclusion, restriction);
        expect([
          outcome(r, A),
          outcome(r, B),
          outcome(r, 'officer.d@probation.example'),
          outcome(r, null, 'deny'),
          outcome(r, null, 'allow'),
        ]).toEqual(table[key]);
      });
    }
  }

  it('a case without rules is open to everyone, whatever the setting', () => {
    for (const user of [A, null]) {
      for (const setting of ['deny', 'allow'] as const) expect(outcome(null, user, setting)).toBe('open');
    }
  });

  it('a user named by both an active exclusion and the restriction is excluded', () => {
    const r: LimitedAccess = { ...rules('active', 'active'), restriction: { users: [A], until: null } };
    expect(outcome(r, A)).toBe('excluded');
  });

  it('compares users without regard to case', () => {
    const r = rules('active', 'active');
    expect(outcome(r, 'Officer.A@Probation.Example')).toBe('excluded');
    expect(outcome(r, 'OFFICER.B@PROBATION.EXAMPLE')).toBe('open');
    const upper: LimitedAccess = {
      ...r,
      exclusions: [{ user: 'OFFICER.A@probation.EXAMPLE', until: null }],
      restriction: { users: ['Officer.B@Probation.Example'], until: null },
    };
    expect(outcome(upper, A)).toBe('excluded');
    expect(outcome(upper, B)).toBe('open');
  });

  it('a user setting never widens: under allow, a user excluded or not named is still refused', () => {
    const r = rules('active', 'active');
    expect(outcome(r, A, 'allow')).toBe('excluded');
    expect(outcome(r, 'officer.d@probation.example', 'allow')).toBe('restricted');
  });

  it('several exclusions: only the active ones count', () => {
    const r: LimitedAccess = {
      ...rules('none', 'none'),
      exclusions: [
        { user: A, until: PAST },
        { user: B, until: FUTURE },
      ],
    };
    expect(outcome(r, A)).toBe('open');
    expect(outcome(r, B)).toBe('excluded');
  });

  it('refusals carry the case message, or a generic one; never another user', () => {
    const withMessages = decideLimitedAccess(
      rules('active', 'active'),
      { user: A, limitedAccess: 'deny' },
      NOW,
    );
    expect(withMessages).toEqual({
      outcome: 'excluded',
      message: 'You are excluded from viewing this case.',
    });
    const generic = rules('active', 'active', false);
    expect(decideLimitedAccess(generic, { user: A, limitedAccess: 'deny' }, NOW)).toEqual({
      outcome: 'excluded',
      message: GENERIC_EXCLUSION_MESSAGE,
    });
    expect(decideLimitedAccess(generic, { user: null, limitedAccess: 'deny' }, NOW)).toEqual({
      outcome: 'restricted',
      message: GENERIC_RESTRICTION_MESSAGE,
    });
    for (const message of [GENERIC_EXCLUSION_MESSAGE, GENERIC_RESTRICTION_MESSAGE]) {
      expect(message).not.toMatch(/@/);
    }
  });
});

describe('isActive', () => {
  it('null is for ever; an end is active until the instant passes, whatever its offset', () => {
    expect(isActive(null, NOW)).toBe(true);
    expect(isActive(FUTURE, NOW)).toBe(true);
    expect(isActive('2026-06-01T12:00:00Z', NOW)).toBe(false);
    expect(isActive(PAST, NOW)).toBe(false);
    // 13:30+01:00 is 12:30Z: later than now.
    expect(isActive('2026-06-01T13:30:00+01:00', NOW)).toBe(true);
    expect(isActive('2026-06-01T12:30:00+01:00', NOW)).toBe(false);
  });

  it('an end that cannot be read is taken as no end (fails closed)', () => {
    expect(isActive('not a date', NOW)).toBe(true);
    expect(isActive('', NOW)).toBe(true);
  });
});

describe('parseLimitedAccessSetting', () => {
  it('reads deny and allow; refuses anything else naming the allowed values', () => {
    expect(parseLimitedAccessSetting('deny')).toBe('deny');
    expect(parseLimitedAccessSetting('allow')).toBe('allow');
    for (const raw of ['Allow', 'yes', '', 'none']) {
      expect(() => parseLimitedAccessSetting(raw)).toThrow(
        /unknown limited-access mode .*; expected one of deny, allow$/,
      );
    }
  });
});
