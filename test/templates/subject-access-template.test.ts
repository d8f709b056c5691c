/**
 * The subject access template (templates/subject-access-request.mustache; decisions §22), rendered
 * as the estate's renderer renders it, by mustache and by Handlebars, against contents the service
 * itself answers, and opened in Debian's Chromium: every field of the content is on the page a
 * person reads, both engines give the same page, and a value is shown as text, never as markup.
 *
 * How a value is looked for on the page: as the content gives it, character for character
 * (dates and times are ISO 8601 strings, and plain mustache cannot reformat a value, so the page
 * shows them so; a number as JavaScript writes it, which both engines do), with white space
 * squashed on both sides (any run of spaces, tabs and line breaks compared as one space: the
 * page's layout turns cell boundaries and line breaks into white space). A multi-line value (the
 * checkpoint) must show each of its non-empty lines. Each value must be found as many times as
 * the content holds it; and, as that could be met by the template's own words, each leaf is also
 * replaced by a marker of its own and that marker looked for, and each boolean flipped and the
 * page seen to change. One leaf alone is not rendered, on purpose: the proof's tree hashes
 * (`content.proof.hashes`, megabytes of base64 in a large answer, for a verifier, not a reader);
 * the page says they are carried, and the tests check it shows none of them.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import Mustache from 'mustache';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { readSarTemplate as servedTemplate } from '../../src/app/composition/subject-access.js';
import type { CaseRecord } from '../../src/domain/types.js';
import type { Disclosure, TrailGap } from '../../src/ports/disclosures.js';
import { ROOT } from '../support/cli.js';
import { fixtureCases } from '../support/fixtures.js';
import { fixtureApp } from '../support/http.js';
import {
  CHROMIUM_MISSING,
  chromiumPresent,
  contentLeaves,
  openChromium,
  type PageReader,
  readSarTemplate,
  renderSar,
  SarRenderingsDiffer,
} from '../support/subject-access-template.js';
import { GAPS } from '../support/trail-gaps.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Content = { [key: string]: Json };

const TEMPLATE = readSarTemplate();
const FULL = 'X123456';
const b64 = (seed: string) => createHash('sha256').update(seed).digest('base64');

/** The signed (and cosigned) checkpoint every disclosure is proved against, as the service writes it. */
const CHECKPOINT = [
  'case-read.test.example/audit',
  '58',
  b64('root 58'),
  '',
  `— case-read.test.example/audit ${b64('signature')}`,
  `— witness.test.example/w1 ${b64('cosignature')}`,
  '',
].join('\n');
/** The proof's tree hashes: seven of 32 bytes, as the answer carries them (base64, end to end). */
const HASHES = Buffer.concat(
  [1, 2, 3, 4, 5, 6, 7].map((n) => createHash('sha256').update(`hash ${n}`).digest()),
);
/** The leaves the template leaves out on purpose: the proof's hashes, for a verifier, not a reader. */
const NOT_RENDERED = ['content.proof.hashes'];

/** Three disclosures: to the service itself (null), for a member of staff, and one refused. */
const DISCLOSURES: Disclosure[] = [
  ['2026-11-02T09:14:07.412Z', 'getCase', 'interventions-service', null, 200],
  ['2026-11-03T14:30:00.005Z', 'getRiskScores', 'prepare-a-case', 'jane.doe@justice.example', 200],
  ['2026-11-28T10:15:30.123Z', 'getCommunityManagerByCrn', 'manage-a-workforce', null, 403],
].map(([time, operation, recipient, onBehalfOf, status], i) => ({
  time: time as string,
  requestId: `0b6f3c1e-52a4-4d7e-9a1b-00000000000${i + 1}`,
  operation: operation as string,
  recipient: recipient as string,
  onBehalfOf: onBehalfOf as string | null,
  status: status as number,
  index: 40 + i,
  entry: Buffer.from(
    `${41 + i},"${b64(`previous ${i}`)}",${time},req-${i},${recipient},0x1f2e,${JSON.stringify(onBehalfOf)},${operation},${FULL},${status}`,
  ).toString('base64'),
}));

/** Two losses of the trail: one from its start (from null), one after a kept record. */
const GAPS_SHOWN = 'Records lost from the audit trail';

/**
 * The content the service's own HTTP answer holds for `crn` (the real use case and handler):
 * with the fixture cases as its case copies, or none kept (`null`: the upstream's way).
 */
async function answer(
  crn: string,
  disclosures: Disclosure[],
  cases: CaseRecord[] | null = fixtureCases(),
  gaps: TrailGap[] = GAPS,
): Promise<Content> {
  const app = fixtureApp({
    subjectAccess: {
      template: TEMPLATE,
      now: () => new Date('2026-11-28T12:00:00Z'),
      caseCopies: cases === null ? undefined : new InMemoryCaseRepository(cases),
      disclosures: {
        of: async () => ({
          count: disclosures.length,
          gaps,
          checkpoint: disclosures.length > 0 ? CHECKPOINT : undefined,
          async *parts() {
            if (disclosures.length === 0) return;
            yield { disclosures };
            yield { hashes: HASHES.subarray(0, 3 * 32) };
            yield { hashes: HASHES.subarray(3 * 32) };
          },
        }),
      },
    },
  });
  const res = await app.request(`/subject-access-request?crn=${crn}`);
  if (res.status !== 200) throw new Error(`the answer for ${crn} was ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { content: Content }).content;
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** The leaves of `content` the template renders: all but {@link NOT_RENDERED}. */
const renderedLeaves = (content: Content) =>
  contentLeaves(content).filter((leaf) => !NOT_RENDERED.includes(leaf.path));

/** The paths of the leaves the page's text does not show as often as the content holds their values. */
function notShown(text: string, content: Content): string[] {
  const page = squash(text);
  const wanted = new Map<string, string[]>();
  for (const { path, value } of renderedLeaves(content)) {
    const lines = typeof value === 'boolean' ? [value ? 'Yes' : 'No'] : String(value).split('\n');
    for (const line of lines.map(squash).filter((l) => l !== '')) {
      wanted.set(line, [...(wanted.get(line) ?? []), path]);
    }
  }
  return [...wanted].filter(([line, paths]) => occurrences(page, line) < paths.length).flatMap(([, p]) => p);
}

/** `value` with each leaf replaced by what `change` makes of it (its path as contentLeaves names it). */
function mapLeaves(
  value: Json,
  change: (path: string, leaf: string | number | boolean) => Json,
  path = 'content',
): Json {
  if (value === null) return null;
  if (Array.isArray(value)) return value.map((item, i) => mapLeaves(item, change, `${path}[${i}]`));
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, mapLeaves(item, change, `${path}.${key}`)]),
    );
  }
  return change(path, value);
}

/**
 * The content with every string and number replaced by a marker naming it, `[leaf 7]`, and the
 * markers (none for the leaves not rendered, which keep their values).
 */
function marked(content: Content): { content: Content; markers: Map<string, string> } {
  const markers = new Map<string, string>();
  const changed = mapLeaves(content, (path, leaf) => {
    if (typeof leaf === 'boolean' || NOT_RENDERED.includes(path)) return leaf;
    markers.set(path, `[leaf ${markers.size}]`);
    return `[leaf ${markers.size - 1}]`;
  }) as Content;
  return { content: changed, markers };
}

/** The template's value tags (`{{recipient}}`, `{{name.forename}}`), once each. */
const valueTags = [
  ...new Set([...TEMPLATE.matchAll(/\{\{([A-Za-z][A-Za-z.]*)\}\}/g)].map((m) => m[1] as string)),
];

/** The text between two headings of the page (squashed), e.g. the whole "What is held" section. */
const between = (text: string, from: string, to: string) => {
  const page = squash(text);
  return page.slice(page.indexOf(from) + from.length, page.indexOf(to)).trim();
};
const HELD = 'What is held';
const GIVEN = "Who was given this person's data";

describe('the subject access template, as a file', () => {
  it('is plain mustache: no triple or ampersand tags, partials, helpers, lambdas or delimiter changes', () => {
    expect(TEMPLATE).not.toMatch(/\{\{\{|\{\{&|\{\{>|\{\{=|\{\{else/);
    // One comment, its first line, saying what it is; no other comment.
    expect(TEMPLATE).toMatch(/^\{\{! [^}]+ \}\}\n/);
    const tags = [...TEMPLATE.matchAll(/\{\{([^}]*)\}\}/g)].map((m) => m[1] as string).slice(1);
    expect(tags.length).toBeGreaterThan(40);
    for (const tag of tags) expect(tag).toMatch(/^[#^/]?[A-Za-z][A-Za-z.]*$/);
    // A section named after one of Handlebars' built-in helpers would run the helper there.
    const builtIn = Object.keys(Handlebars.helpers);
    expect(builtIn).toContain('each');
    for (const tag of tags) expect(builtIn, tag).not.toContain(tag.replace(/^[#^/]/, '').split('.')[0]);
  });

  it('is the file serve answers, as text, and the image ships (the Dockerfile copies templates/)', async () => {
    const runtime =
      readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
        .split(/^FROM /m)
        .at(-1) ?? '';
    expect(runtime).toMatch(/^COPY templates \.\/templates$/m);
    const app = fixtureApp({
      subjectAccess: {
        template: servedTemplate(),
        now: () => new Date(),
        disclosures: { of: async () => ({ count: 0, gaps: [], checkpoint: undefined, async *parts() {} }) },
      },
    });
    const res = await app.request('/subject-access-request/template');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe(TEMPLATE);
  });
});

describe('the subject access template, rendered by mustache and by Handlebars', () => {
  /** Every fixture case's content, alternately with and without disclosures, and with and without gaps. */
  const contents = new Map<string, Content>();
  beforeAll(async () => {
    for (const [i, { crn }] of fixtureCases().entries()) {
      contents.set(crn, await answer(crn, i % 2 ? DISCLOSURES : [], fixtureCases(), i % 3 ? GAPS : []));
    }
  });

  it("differs between the engines only in how mustache.js escapes / and ' (renderSar's comparison)", () => {
    const ascii = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));
    expect(ascii.filter((c) => Mustache.escape(c) !== Handlebars.escapeExpression(c))).toEqual(["'", '/']);
  });

  it("passes renderSar's comparison for every fixture case, with disclosures and without, and for no case", async () => {
    const cases = fixtureCases();
    for (const { crn } of cases) {
      expect(() => renderSar(contents.get(crn))).not.toThrow();
    }
    expect(cases.map((c) => c.crn)).toContain('B000018'); // notes "": a section on it would differ
    expect(() =>
      renderSar({ crn: FULL, disclosures: DISCLOSURES, proof: { checkpoint: CHECKPOINT, hashes: '' } }),
    ).not.toThrow();
    expect(() => renderSar({ crn: FULL, gaps: GAPS, disclosures: [] })).not.toThrow();
  });

  it('throws when Handlebars renders the template differently', () => {
    // Mustache looks a name up in the enclosing context; Handlebars does not.
    const leaning = `${TEMPLATE}{{#disclosures}}{{crn}}{{/disclosures}}`;
    expect(() => renderSar({ crn: FULL, disclosures: DISCLOSURES }, leaning)).toThrow(SarRenderingsDiffer);
  });
});

const present = chromiumPresent();

describe.skipIf(!present)(
  present
    ? 'the subject access template, opened in Chromium'
    : `the subject access template, opened in Chromium (${CHROMIUM_MISSING})`,
  () => {
    let chromium: PageReader;
    let full: Content;

    beforeAll(async () => {
      full = await answer(FULL, DISCLOSURES);
      chromium = await openChromium();
    }, 180_000);
    afterAll(() => chromium?.close());

    it('shows every leaf of a full content, as often as the content holds it', async () => {
      const held = full.case as Content;
      for (const part of ['personalDetails', 'homeOfficeInterest', 'communityManager']) {
        expect(held[part], part).not.toBeNull();
      }
      expect((held.riskScores as Json[]).length).toBe(3);
      expect((full.gaps as Content[]).map((g) => g.from)).toEqual([null, GAPS[1]?.from]);
      expect((full.disclosures as Content[]).map((d) => d.onBehalfOf)).toEqual([
        null,
        'jane.doe@justice.example',
        null,
      ]);
      const leaves = contentLeaves(full);
      expect(leaves.length).toBeGreaterThan(90);
      const text = await chromium.visibleText(renderSar(full));
      expect(notShown(text, full)).toEqual([]);
      // Every leaf but the proof's hashes: those are carried, said to be, and not shown (not one of them).
      expect(
        leaves.map((leaf) => leaf.path).filter((path) => !renderedLeaves(full).some((l) => l.path === path)),
      ).toEqual(NOT_RENDERED);
      const proof = full.proof as Content;
      expect(proof.hashes).toBe(HASHES.toString('base64'));
      for (let k = 0; k < HASHES.length; k += 32) {
        expect(squash(text)).not.toContain(
          HASHES.subarray(k, k + 32)
            .toString('base64')
            .slice(0, 16),
        );
      }
      expect(squash(text)).toContain(
        'also carries the tree hashes that prove every record against this checkpoint',
      );
      expect(squash(text)).toContain('case-read subject-access verify');
      // The checkpoint once, whatever the number of disclosures; each disclosure's position in the log.
      expect(occurrences(text, b64('root 58'))).toBe(1);
      expect(squash(text)).toContain(
        `Request id ${DISCLOSURES[1]?.requestId} Position in the audit log (counting from 0) 41 Audit record (base64)`,
      );
      // The row for the member of staff, and those for the receiving service itself.
      expect(squash(text)).toContain('prepare-a-case jane.doe@justice.example getRiskScores 200');
      expect(squash(text)).toContain(
        'manage-a-workforce The receiving service itself, for no named member of staff',
      );
      // Each loss on a row of its own: one from the trail's start (from null), one after a kept record.
      expect(squash(text)).toContain(
        `The start of the audit trail ${GAPS[0]?.to} 7 restored from the first backup ${GAPS[1]?.from} ${GAPS[1]?.to} 212`,
      );
      expect(squash(text)).toContain("which the service's command case-read audit verify checks");
    });

    it('shows each leaf where it belongs: its own marker for a string or number, a change of page for a boolean', async () => {
      const { content, markers } = marked(full);
      const text = await chromium.visibleText(renderSar(content));
      expect([...markers].filter(([, marker]) => !text.includes(marker)).map(([path]) => path)).toEqual([]);
      const booleans = contentLeaves(full).filter((leaf) => typeof leaf.value === 'boolean');
      expect(booleans.map((leaf) => leaf.path)).toEqual(['content.case.homeOfficeInterest.exists']);
      const before = await chromium.visibleText(renderSar(full));
      for (const { path } of booleans) {
        const flipped = mapLeaves(full, (at, leaf) => (at === path ? !leaf : leaf)) as Content;
        expect(await chromium.visibleText(renderSar(flipped)), path).not.toBe(before);
      }
      expect(squash(before)).toContain('The Home Office has an interest Yes');
    });

    it('gives the same visible page from the mustache and the Handlebars HTML', async () => {
      const html = Handlebars.compile(TEMPLATE)(full);
      expect(html).not.toBe(Mustache.render(TEMPLATE, full)); // the checkpoint's `/`, escaped two ways
      expect(await chromium.visibleText(html)).toBe(await chromium.visibleText(renderSar(full)));
    });

    it('misses a leaf when any value tag is dropped from the template', async () => {
      const { content, markers } = marked(full);
      expect(valueTags).toContain('recipient');
      for (const tag of valueTags) {
        const text = await chromium.visibleText(renderSar(content, TEMPLATE.replaceAll(`{{${tag}}}`, '')));
        const missing = [...markers].filter(([, marker]) => !text.includes(marker)).map(([path]) => path);
        expect(
          missing.some((path) => path === `content.${tag}` || path.endsWith(`.${tag}`)),
          tag,
        ).toBe(true);
      }
    });

    it('with no case copy kept (case absent): says the service holds no copy, and nothing else of a case', async () => {
      const content = await answer(FULL, DISCLOSURES, null);
      expect(Object.keys(content)).toEqual(['crn', 'gaps', 'disclosures', 'proof']);
      const text = await chromium.visibleText(renderSar(content));
      expect(between(text, HELD, GIVEN)).toBe(
        'No case is held for this CRN: this service holds no copy of one.',
      );
      expect(notShown(text, content)).toEqual([]);
    });

    it('with case null: says no case is held, the same page as with case absent', async () => {
      const content = await answer('Y000001', DISCLOSURES);
      expect(content.case).toBeNull();
      const text = await chromium.visibleText(renderSar(content));
      expect(between(text, HELD, GIVEN)).toBe(
        'No case is held for this CRN: this service holds no copy of one.',
      );
      // Plain mustache cannot tell a null from an absent key (both are falsy, in both engines).
      const { case: _, ...absent } = content;
      expect(await chromium.visibleText(renderSar(absent))).toBe(text);
    });

    it('with no disclosures and no loss: says the data was given to no one, and no record was lost', async () => {
      const content = await answer(FULL, [], fixtureCases(), []);
      expect(content.disclosures).toEqual([]);
      expect(content.gaps).toEqual([]);
      const text = squash(await chromium.visibleText(renderSar(content)));
      expect(text).toContain(
        "None recorded: this service gave this person's data to no one in the period asked for.",
      );
      expect(between(text, GAPS_SHOWN, 'What was asked for, by the name')).toMatch(
        /None: no record of this service's audit trail was lost in the period asked for\.$/,
      );
      expect(text).toMatch(/Evidence for each request .* None\.$/);
      expect(text).toContain('Risk predictor scores');
    });

    it('with no disclosures but a loss: never says the data was given to no one, and shows the loss', async () => {
      const content = await answer(FULL, [], fixtureCases(), GAPS.slice(1));
      const text = squash(await chromium.visibleText(renderSar(content)));
      expect(text).toContain('Answer None recorded.');
      expect(text).not.toContain('to no one');
      expect(text).not.toContain('no record of this service');
      expect(text).toContain(`${GAPS[1]?.from} ${GAPS[1]?.to} 212 restored from the 04:00 backup (INC-1234)`);
      expect(notShown(text, content)).toEqual([]);
    });

    it('shows HTML special characters in a value as text, injecting no element', async () => {
      const nasty = `<script>alert(1)</script><b id="injected">bold</b> &amp; & "double" 'single' </pre></td>`;
      const replacing = (value: string) =>
        mapLeaves(full, (path, leaf) =>
          /\.(notes|forename|recipient|checkpoint)$/.test(path) ? value : leaf,
        ) as Content;
      const html = renderSar(replacing(nasty));
      expect(html).not.toMatch(/<script|<b /);
      const text = await chromium.visibleText(html);
      // As often as a plain value in the same places is shown (counted, not written: a new part of the case may hold more).
      const plain = 'plain-value-in-their-place';
      const shown = occurrences(await chromium.visibleText(renderSar(replacing(plain))), plain);
      expect(shown).toBeGreaterThan(2 * DISCLOSURES.length);
      expect(occurrences(text, nasty)).toBe(shown);
      expect(await chromium.count(html, 'script, b, #injected')).toBe(0);
    });
  },
);
