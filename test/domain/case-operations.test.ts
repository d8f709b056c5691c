import { describe, expect, it } from 'vitest';
import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { DEVELOPMENT_CLIENT_PERMISSIONS, PERMISSIONS } from '../../src/domain/access/permissions.js';
import { REDACTABLE_FIELDS } from '../../src/domain/access/redaction.js';
import {
  CASE_OPERATIONS,
  CASE_READS,
  caseOperation,
  casePath,
  requiresBearer,
} from '../../src/domain/case-operations.js';
import { Crn } from '../../src/domain/crn.js';
import { getSubjectAccessRequest } from '../../src/domain/use-cases/subject-access.js';
import type { DisclosureList } from '../../src/ports/disclosures.js';
import { CaseMother } from '../support/mothers.js';

/**
 * The table of the case operations (src/domain/case-operations.ts), and what is read from it.
 * This file, with the specification's own table (test/spec), is where the case reads are named.
 */
describe('the case operations table', () => {
  const ids = CASE_OPERATIONS.map((row) => row.id);

  it('names each operation once, at a path of its own with the crn in it once', () => {
    expect(new Set(ids).size).toBe(ids.length);
    const paths = CASE_OPERATIONS.map((row) => row.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const row of CASE_OPERATIONS) expect(row.path.split('{crn}'), row.id).toHaveLength(2);
  });

  it('holds the case reads the specification gives, and the risk scores of decisions §4', () => {
    expect(ids).toEqual(
      expect.arrayContaining([
        'getCase',
        'getHomeOfficeInterest',
        'getCommunityManagerByCrn',
        'getRiskScores',
      ]),
    );
  });

  it('its ids are the permissions of the case reads, which the permission list begins with', () => {
    expect(CASE_READS).toEqual(ids);
    expect(PERMISSIONS.slice(0, ids.length)).toEqual(ids);
    expect(new Set(PERMISSIONS).size).toBe(PERMISSIONS.length);
  });

  it('asks for a bearer JWT on the /case reads alone: the specification scheme covers "all three /case/... operations"', () => {
    for (const row of CASE_OPERATIONS) expect(row.bearer, row.id).toBe(row.path.startsWith('/case/'));
    for (const permission of PERMISSIONS) {
      expect(requiresBearer(permission), permission).toBe(
        CASE_OPERATIONS.some((row) => row.id === permission && row.bearer),
      );
    }
    expect(requiresBearer('issueQueueToken')).toBe(false);
    expect(requiresBearer('no-such-operation')).toBe(false);
  });

  it('the fields a client may have withheld are the rows’, in their order, each once', () => {
    expect(REDACTABLE_FIELDS).toEqual(CASE_OPERATIONS.flatMap((row) => row.withholds));
    expect(new Set(REDACTABLE_FIELDS).size).toBe(REDACTABLE_FIELDS.length);
  });

  it('the development client holds every case read and queue tokens, nothing that needs settings of its own', () => {
    expect(DEVELOPMENT_CLIENT_PERMISSIONS).toEqual([...ids, 'issueQueueToken']);
  });

  it('casePath puts the crn in its row’s path, percent-encoded', () => {
    for (const row of CASE_OPERATIONS) {
      const path = casePath(row, 'X 1/2');
      expect(path, row.id).toBe(row.path.replace('{crn}', 'X%201%2F2'));
    }
    expect(caseOperation('getRiskScores').path).toBe('/v1/persons/{crn}/risks/scores');
  });

  it('every part of the subject access answer’s held case is the one row’s that reads it (heldAs), and no row’s part is left out', async () => {
    const none: DisclosureList = { count: 0, gaps: [], checkpoint: undefined, async *parts() {} };
    const answer = await getSubjectAccessRequest(
      {
        disclosures: { of: async () => none },
        caseCopies: new InMemoryCaseRepository([CaseMother.full('X123456')]),
        now: () => new Date('2026-12-01T00:00:00Z'),
      },
      { crn: Crn.parse('X123456') },
    );
    expect(answer.kind).toBe('content');
    const held = answer.kind === 'content' ? answer.case : undefined;
    const parts = CASE_OPERATIONS.flatMap((row) => (row.heldAs === null ? [] : [row.heldAs]));
    expect(new Set(parts).size).toBe(parts.length);
    expect(Object.keys(held ?? {}).sort()).toEqual([...parts].sort());
    for (const part of parts) expect(held?.[part], part).not.toBeNull();
  });
});
