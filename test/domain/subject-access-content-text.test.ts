import { describe, expect, it } from 'vitest';
import {
  type ContentToWrite,
  contentLines,
  contentText,
} from '../../src/domain/subject-access/content-text.js';
import type { Disclosure, DisclosureList, TrailGap } from '../../src/ports/disclosures.js';
import { GAPS as FIXTURE } from '../support/trail-gaps.js';

/**
 * The subject access answer's JSON text (content-text.ts): `gaps` always there, in the head
 * after the case and before the disclosures (an empty list when the trail lost nothing in the
 * window), each gap its four fields; written before the first disclosure is read, so the
 * disclosures still stream after it.
 */

/** The losses of test/support/trail-gaps.ts, the second's reason quoted: its JSON escapes them. */
const GAPS: TrailGap[] = [
  ...FIXTURE.slice(0, 1),
  { ...(FIXTURE[1] as TrailGap), reason: 'restored from the 04:00 backup "INC-1234"' },
];

const DISCLOSURE: Disclosure = {
  time: '2026-11-02T09:14:07.412Z',
  requestId: 'req-1',
  operation: 'getCase',
  recipient: 'interventions-service',
  onBehalfOf: null,
  status: 200,
  index: 40,
  entry: Buffer.from('record 41').toString('base64'),
};

const CHECKPOINT = 'log.example/audit\n58\nroot\n\n— log.example/audit c2ln\n';

function list(gaps: readonly TrailGap[], disclosures: Disclosure[] = []): DisclosureList {
  return {
    count: disclosures.length,
    gaps,
    checkpoint: disclosures.length > 0 ? CHECKPOINT : undefined,
    async *parts() {
      if (disclosures.length === 0) return;
      yield { disclosures };
      yield { hashes: new Uint8Array(3 * 32).fill(1) };
    },
  };
}

async function textOf(content: ContentToWrite): Promise<string> {
  let text = '';
  for await (const piece of contentText(content)) text += piece;
  return text;
}

describe('the subject access answer text', () => {
  it('carries "gaps":[] when the trail lost nothing, after the case and before the disclosures', async () => {
    expect(await textOf({ crn: 'X123456', disclosures: list([]) })).toBe(
      '{"content":{"crn":"X123456","gaps":[],"disclosures":[]}}',
    );
    expect(await textOf({ crn: 'X123456', case: null, disclosures: list([]) })).toBe(
      '{"content":{"crn":"X123456","case":null,"gaps":[],"disclosures":[]}}',
    );
  });

  it('carries each gap, its four fields in order, and stays one JSON value with disclosures and proof', async () => {
    const text = await textOf({ crn: 'X123456', case: null, disclosures: list(GAPS, [DISCLOSURE]) });
    expect(text).toContain(
      `"case":null,"gaps":[{"from":null,"to":"2026-03-01T02:00:00.000Z","recordsLost":7,"reason":"restored from the first backup"},{"from":"2026-11-10T04:00:00.000Z","to":"2026-11-10T05:10:00.000Z","recordsLost":212,"reason":"restored from the 04:00 backup \\"INC-1234\\""}],"disclosures":[`,
    );
    const parsed = JSON.parse(text) as { content: Record<string, unknown> };
    expect(Object.keys(parsed.content)).toEqual(['crn', 'case', 'gaps', 'disclosures', 'proof']);
    expect(parsed.content.gaps).toEqual(GAPS);
    expect(parsed.content.disclosures).toEqual([DISCLOSURE]);
  });

  it('carries gaps with no disclosure and no case (no proof: nothing to prove)', async () => {
    const text = await textOf({ crn: 'X123456', disclosures: list(GAPS.slice(1)) });
    expect(JSON.parse(text)).toEqual({ content: { crn: 'X123456', gaps: GAPS.slice(1), disclosures: [] } });
  });

  it('writes only the four fields of a gap, whatever else the object holds', async () => {
    const more = [{ ...GAPS[1], seq: 41, origin: 'log.example/audit-2' } as TrailGap];
    const parsed = JSON.parse(await textOf({ crn: 'X123456', disclosures: list(more) })) as {
      content: { gaps: object[] };
    };
    expect(parsed.content.gaps).toEqual([GAPS[1]]);
  });

  it('writes the gaps in the first line, before a disclosure is read: the disclosures still stream after it', async () => {
    let asked = false;
    const streaming: DisclosureList = {
      ...list(GAPS, [DISCLOSURE]),
      // biome-ignore lint/correctness/useYield: it throws at once, having noted it was asked.
      async *parts() {
        asked = true;
        throw new Error('the second read failed');
      },
    };
    const lines = contentLines({ crn: 'X123456', disclosures: streaming })[Symbol.asyncIterator]();
    const first = await lines.next();
    expect(asked).toBe(false);
    expect(first.value).toBe(`{"content":{"crn":"X123456","gaps":${JSON.stringify(GAPS)},"disclosures":[`);
    await expect(lines.next()).rejects.toThrow('the second read failed');
  });
});
