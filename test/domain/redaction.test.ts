import { describe, expect, it } from 'vitest';
import {
  minimiseCommunityManager,
  minimiseHomeOfficeInterest,
  minimisePersonalDetails,
  parseRedactList,
  REDACTABLE_FIELDS,
  withholdsPersonalDetails,
} from '../../src/domain/access/redaction.js';
import { CaseMother } from '../support/mothers.js';

describe('parseRedactList', () => {
  it('reads a list in any order, without repeats, in the order of the known fields; none is empty', () => {
    expect(parseRedactList('communityManager.emailAddress, preferredLanguage,preferredLanguage')).toEqual([
      'preferredLanguage',
      'communityManager.emailAddress',
    ]);
    expect(parseRedactList(REDACTABLE_FIELDS.join(','))).toEqual(REDACTABLE_FIELDS);
    expect(parseRedactList('none')).toEqual([]);
    // Each field listed once (the list's length is the domain's, not pinned here).
    expect(new Set(REDACTABLE_FIELDS).size).toBe(REDACTABLE_FIELDS.length);
  });

  it('refuses an unknown field, naming it and every allowed value', () => {
    for (const raw of [
      'emailAddress',
      'preferredLanguage,crn',
      'communityManager.name',
      '',
      'none,preferredLanguage',
    ]) {
      expect(() => parseRedactList(raw)).toThrow(
        new RegExp(
          `unknown field to redact .*; expected none, or one or more of ${REDACTABLE_FIELDS.join(', ').replaceAll('.', '\\.')}$`,
        ),
      );
    }
  });
});

describe('minimising an answer', () => {
  const record = CaseMother.full();
  const manager = { crn: record.crn, communityManager: record.communityManager! };

  it('withholding nothing answers the very same object', () => {
    expect(minimisePersonalDetails(record.personalDetails, [])).toBe(record.personalDetails);
    expect(minimiseHomeOfficeInterest(record.homeOfficeInterest, [])).toBe(record.homeOfficeInterest);
    expect(minimiseCommunityManager(manager, [])).toBe(manager);
  });

  it('sets each withheld field to null and leaves every other field as it is', () => {
    expect(
      minimisePersonalDetails(record.personalDetails, ['disabilities', 'communityManager.jobRole']),
    ).toStrictEqual({
      ...record.personalDetails,
      disabilities: null,
    });
    expect(minimiseHomeOfficeInterest(record.homeOfficeInterest, ['homeOfficeInterest.notes'])).toStrictEqual(
      {
        exists: record.homeOfficeInterest.exists,
        notes: null,
      },
    );
    expect(
      minimiseCommunityManager(manager, [
        'communityManager.name.middleName',
        'communityManager.teamPhoneNumber',
      ]),
    ).toStrictEqual({
      crn: record.crn,
      communityManager: {
        ...manager.communityManager,
        name: { ...manager.communityManager.name, middleName: null },
        teamPhoneNumber: null,
      },
    });
  });

  it('never changes what it was given', () => {
    const before = structuredClone(manager);
    minimiseCommunityManager(manager, REDACTABLE_FIELDS);
    minimisePersonalDetails(record.personalDetails, REDACTABLE_FIELDS);
    expect(manager).toStrictEqual(before);
  });

  it('knows which lists reach into a getCase answer', () => {
    expect(withholdsPersonalDetails(['homeOfficeInterest.notes', 'communityManager.jobRole'])).toBe(false);
    expect(withholdsPersonalDetails(['offenderPersonalityDisorder'])).toBe(true);
  });
});
