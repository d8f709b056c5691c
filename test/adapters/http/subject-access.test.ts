import { describe, expect, it } from 'vitest';
import { InMemoryCaseRepository } from '../../../src/adapters/memory/case-repository.js';
import { TrailIncompleteError } from '../../../src/domain/errors.js';
import type { TimeWindow } from '../../../src/ports/audit-log.js';
import type { Disclosure, DisclosureList, Disclosures, TrailGap } from '../../../src/ports/disclosures.js';
import { fixtureCases } from '../../support/fixtures.js';
import { fixtureApp, recordingLogger, servedDocument } from '../../support/http.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';
import { GAPS } from '../../support/trail-gaps.js';

/**
 * The subject access routes in the HTTP adapter (decisions §22), over a list of disclosures
 * held here: the answers and their shapes as the document declares them, the stream's
 * framing, and a stream broken off (never ended as if complete) when the second read fails.
 */

const disclosure = (n: number): Disclosure => ({
  time: `2026-11-2${n % 10}T10:00:00.000Z`,
  requestId: `request-${n}`,
  operation: n % 2 === 0 ? 'getCase' : 'getRiskScores',
  recipient: n % 3 === 0 ? 'client-b' : 'client-a',
  onBehalfOf: n % 2 === 0 ? null : 'jane.doe@example.gov.uk',
  status: 200,
  index: n * 10,
  entry: Buffer.from(`record ${n}`).toString('base64'),
});

const CHECKPOINT = 'log.example/audit\n2600\nroot\n\n— log.example/audit c2ln\n';
/** The proof's hashes as held here: `n` hashes of 32 bytes, the k-th all k. */
const hashesOf = (n: number) => Uint8Array.from({ length: n * 32 }, (_, i) => Math.floor(i / 32) % 256);

/** Two losses of the trail, as continuation records state them: from the trail's start, and after a kept record. */

/** Disclosures in batches of `size`; the batch at `failAt`, if any, throws; the trail's losses `gaps`. */
function heldDisclosures(
  count: number,
  size = 100,
  failAt?: number | 'hashes',
  gaps: readonly TrailGap[] = [],
) {
  const asked: { crn: string; window: TimeWindow }[] = [];
  const source: Disclosures = {
    of: async (crn, window): Promise<DisclosureList> => {
      asked.push({ crn, window });
      const all = Array.from({ length: count }, (_, i) => disclosure(i + 1));
      return {
        count,
        gaps,
        checkpoint: count === 0 ? undefined : CHECKPOINT,
        async *parts() {
          for (let at = 0, n = 0; at < all.length; at += size, n++) {
            if (n === failAt) throw new TrailIncompleteError('bundle 3 was changed');
            yield { disclosures: all.slice(at, at + size) };
          }
          if (count === 0) return;
          // Two pieces of three hashes and one of one: their base64 end to end.
          yield { hashes: hashesOf(3) };
          yield { hashes: hashesOf(3) };
          yield { hashes: hashesOf(1) };
          if (failAt === 'hashes') throw new TrailIncompleteError('another root');
        },
      };
    },
  };
  return { source, asked };
}

const appWith = (disclosures: Disclosures, withCases = true, logger = recordingLogger()) =>
  fixtureApp({
    logger,
    subjectAccess: {
      disclosures,
      caseCopies: withCases ? new InMemoryCaseRepository(fixtureCases()) : undefined,
      now: () => new Date('2026-11-28T12:00:00Z'),
      template: 'TEMPLATE {{crn}}\n',
    },
  });

describe('GET /subject-access-request', () => {
  it('answers the content as the document declares it: the case held and every disclosure, in order', async () => {
    const { source, asked } = heldDisclosures(250, 100, undefined, GAPS);
    const app = appWith(source);
    const res = await app.request('/subject-access-request?crn=X123456&fromDate=2026-11-01');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as {
      content: {
        crn: string;
        case: unknown;
        gaps: TrailGap[];
        disclosures: Disclosure[];
        proof: { checkpoint: string; hashes: string };
      };
    };
    expect(body.content.crn).toBe('X123456');
    expect(Object.keys(body.content)).toEqual(['crn', 'case', 'gaps', 'disclosures', 'proof']);
    expect(body.content.gaps).toEqual(GAPS);
    expect(body.content.disclosures).toEqual(Array.from({ length: 250 }, (_, i) => disclosure(i + 1)));
    expect(body.content.proof.checkpoint).toBe(CHECKPOINT);
    expect(Buffer.from(body.content.proof.hashes, 'base64')).toEqual(
      Buffer.concat([hashesOf(3), hashesOf(3), hashesOf(1)]),
    );
    expect(body.content.case).toMatchObject({
      personalDetails: expect.any(Object),
      riskScores: expect.any(Array),
    });
    const validator = new OpenApiValidator(await servedDocument(app));
    expect(validator.responseErrors('/subject-access-request', 'get', 200, 'application/json', body)).toEqual(
      [],
    );
    // The window handed down: 1 November (GMT) to the end of today in London.
    expect(asked[0]?.window.from?.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(asked[0]?.window.to?.toISOString()).toBe('2026-11-29T00:00:00.000Z');
  });

  it('leaves the case out where the store keeps no copies; 200 with the disclosures alone', async () => {
    const res = await appWith(heldDisclosures(1).source, false).request(
      '/subject-access-request?crn=X123456',
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { content: Record<string, unknown> };
    expect(Object.keys(body.content)).toEqual(['crn', 'gaps', 'disclosures', 'proof']);
    expect(body.content.gaps).toEqual([]);
  });

  it('answers 204, no body, when nothing is held; 209 for a prn alone', async () => {
    const none = await appWith(heldDisclosures(0).source, false).request(
      '/subject-access-request?crn=X123456',
    );
    expect(none.status).toBe(204);
    expect(await none.text()).toBe('');
    expect(none.headers.get('content-type')).toBeNull();
    // Held in the store (a case) with no disclosures is not nothing: no proof, there being none to prove.
    const caseOnly = await appWith(heldDisclosures(0).source).request('/subject-access-request?crn=X123456');
    expect(caseOnly.status).toBe(200);
    expect(Object.keys(((await caseOnly.json()) as { content: object }).content)).toEqual([
      'crn',
      'case',
      'gaps',
      'disclosures',
    ]);
    const prn = await appWith(heldDisclosures(0).source).request('/subject-access-request?prn=A1234BC');
    expect(prn.status).toBe(209);
    expect(await prn.text()).toBe('');
  });

  it('answers 200, not 204, when the trail lost records in the window: nothing else held, the person is told of the loss', async () => {
    const app = appWith(heldDisclosures(0, 100, undefined, GAPS.slice(1)).source, false);
    const res = await app.request('/subject-access-request?crn=X123456');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { content: Record<string, unknown> };
    expect(body).toEqual({ content: { crn: 'X123456', gaps: GAPS.slice(1), disclosures: [] } });
    const validator = new OpenApiValidator(await servedDocument(app));
    expect(validator.responseErrors('/subject-access-request', 'get', 200, 'application/json', body)).toEqual(
      [],
    );
    // A gap of the wrong form is not what the document declares (the validator sees the schema's fields).
    const wrong = { content: { ...body.content, gaps: [{ ...GAPS[0], recordsLost: '12' }] } };
    expect(
      validator.responseErrors('/subject-access-request', 'get', 200, 'application/json', wrong),
    ).not.toEqual([]);
  });

  it.each([
    ['', 'crn'],
    ['crn=X12', 'crn'],
    ['crn=X123456&fromDate=2026-02-30', 'fromDate'],
    ['crn=X123456&toDate=28-11-2026', 'toDate'],
    ['crn=X123456&fromDate=2026-11-29&toDate=2026-11-28', 'fromDate'],
  ])('answers 400 problem+json naming the parameter for %j', async (query, parameter) => {
    const res = await appWith(heldDisclosures(1).source).request(`/subject-access-request?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { detail: string }).detail).toContain(parameter);
  });

  it('answers 503 trail-unavailable when the trail cannot be read whole, the reason logged, not sent', async () => {
    const logger = recordingLogger();
    const failing: Disclosures = {
      of: () =>
        Promise.reject(new TrailIncompleteError('tile/entries/000 is missing from /archive (ENOENT)')),
    };
    const res = await appWith(failing, true, logger).request('/subject-access-request?crn=X123456');
    expect(res.status).toBe(503);
    const problem = (await res.json()) as { type: string; detail: string };
    expect(problem.type).toBe('urn:case-read:problem:trail-unavailable');
    expect(problem.detail).not.toContain('tile/entries');
    const line = logger.lines.find((l) => l.message.startsWith('subject access request not answered'));
    expect(line?.fields.reason).toBe('tile/entries/000 is missing from /archive (ENOENT)');
  });

  it('breaks the stream off, never ending it as if complete, when the second read fails', async () => {
    const logger = recordingLogger();
    const res = await appWith(heldDisclosures(250, 100, 1).source, true, logger).request(
      '/subject-access-request?crn=X123456',
    );
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(logger.lines.some((l) => l.message.startsWith('subject access answer broken off'))).toBe(true);
  });

  it('breaks the stream off inside the proof when the last check fails: every disclosure sent, never closed', async () => {
    const res = await appWith(heldDisclosures(250, 100, 'hashes').source).request(
      '/subject-access-request?crn=X123456',
    );
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });
});

describe('GET /subject-access-request/template', () => {
  it('answers the template as text/plain, the same bytes on every call', async () => {
    const app = appWith(heldDisclosures(0).source);
    const first = await app.request('/subject-access-request/template');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await first.text()).toBe('TEMPLATE {{crn}}\n');
    expect(await (await app.request('/subject-access-request/template')).text()).toBe('TEMPLATE {{crn}}\n');
  });
});
