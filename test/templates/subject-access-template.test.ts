import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import Mustache from 'mustache';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointSigner, generateCheckpointKeys } from '../../src/adapters/crypto/checkpoint-keys.js';
import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { SqliteAuditLog } from '../../src/adapters/sqlite/audit-log.js';
import { disclosuresOf } from '../../src/app/audit/disclosures.js';
import { auditHashes, noteVerifier } from '../../src/app/composition/audit-keys.js';
import { SAR_TEMPLATE_FILE } from '../../src/app/composition/subject-access.js';
import { signCheckpoint } from '../../src/domain/audit/checkpoint.js';
import { auditRecord } from '../contract/audit-log.contract.js';
import { ROOT } from '../support/cli.js';
import { fixtureCases } from '../support/fixtures.js';
import { fixtureApp } from '../support/http.js';

/**
 * The subject access template (decisions §22), rendered as the estate's renderer renders it,
 * against a real answer of the service (its HTTP adapter over a SQLite trail with signed
 * checkpoints), by mustache and by Handlebars, and opened in Debian's Chromium: every field of
 * the content is on the page a person reads, both engines give the same page, and a value is
 * shown as text, never as markup.
 */

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is not installed: .ci/run installs chromium`);
const BROWSER_TIMEOUT = 90_000;
const TEMPLATE = readFileSync(SAR_TEMPLATE_FILE, 'utf8');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every leaf of the content (null aside: it is shown as the template's words), with its path. */
function leaves(value: Json, path = 'content'): { path: string; value: string | number | boolean }[] {
  if (value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, `${path}[${i}]`));
  if (typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => leaves(item, `${path}.${key}`));
  return [{ path, value }];
}

/** The leaves the page's text does not show: a boolean as Yes/No, a multi-line text line by line. */
function missingFrom(text: string, content: Json): string[] {
  const shown = (value: string | number | boolean) =>
    typeof value === 'boolean'
      ? text.includes(value ? 'Yes' : 'No')
      : String(value)
          .split('\n')
          .every((line) => text.includes(line));
  return leaves(content)
    .filter(({ value }) => !shown(value))
    .map(({ path }) => path);
}

const render = (template: string, content: unknown) => ({
  mustache: Mustache.render(template, content),
  handlebars: Handlebars.compile(template)(content),
});

let dir: string;
let browser: Browser | undefined;
let content: { [key: string]: Json };

/** A real answer: four records naming the crn, one on behalf of a member of staff, all proved. */
async function realAnswer(): Promise<{ [key: string]: Json }> {
  const log = SqliteAuditLog.open(join(dir, 'audit.db'));
  const keys = await generateCheckpointKeys();
  const signer = await checkpointSigner(keys.privatePem, 'case-read.test.example/audit');
  for (let i = 1; i <= 8; i++) {
    await log.append(
      auditRecord(i, {
        crn: i % 2 ? 'X123456' : 'A000001',
        onBehalfOf: i === 3 ? 'jane.doe@example.gov.uk' : null,
      }),
    );
  }
  const grown = await log.growTree();
  if (grown.root) await log.saveCheckpoint(signCheckpoint(grown.head, new Date(), signer, grown.root));
  const cases = fixtureCases().map((c) =>
    c.crn === 'X123456'
      ? { ...c, homeOfficeInterest: { exists: true, notes: 'Notes <script>alert(1)</script> & "quoted"' } }
      : c,
  );
  const app = fixtureApp({
    subjectAccess: {
      disclosures: disclosuresOf({ hashes: auditHashes, log, keys: [noteVerifier(signer.note)] }),
      caseCopies: new InMemoryCaseRepository(cases),
      now: () => new Date('2026-11-28T12:00:00Z'),
      template: TEMPLATE,
    },
  });
  const res = await app.request('/subject-access-request?crn=X123456');
  if (res.status !== 200) throw new Error(`the answer was ${res.status}: ${await res.text()}`);
  const answer = ((await res.json()) as { content: { [key: string]: Json } }).content;
  log.close();
  return answer;
}

/** The page's visible text, the HTML opened in Chromium; and whether any script element came of a value. */
async function opened(html: string): Promise<{ text: string; scripts: number }> {
  const page = await (browser as Browser).newPage();
  try {
    await page.setJavaScriptEnabled(false);
    await page.setContent(`<!doctype html><html><body>${html}</body></html>`, { waitUntil: 'load' });
    const text = await page.$eval('body', (body) => body.textContent ?? '');
    const scripts = await page.$$eval('script', (found) => found.length);
    return { text, scripts };
  } finally {
    await page.close();
  }
}

describe('the subject access template, as a file', () => {
  it('is plain mustache: no triple braces, no partials, no helpers, no lambdas', () => {
    expect(TEMPLATE).not.toMatch(/\{\{\{|\{\{&|\{\{>|\{\{!|\{\{=/);
    for (const [, tag] of TEMPLATE.matchAll(/\{\{([^}]*)\}\}/g)) {
      expect(tag).toMatch(/^[#^/]?[A-Za-z][A-Za-z.]*$/);
    }
  });

  it('is the file the image ships: the Dockerfile copies templates/', () => {
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^COPY templates \.\/templates$/m);
  });
});

describe.skipIf(!available)(
  available
    ? 'the subject access template rendered against a real answer, opened in Chromium'
    : `the subject access template rendered (skipped: no ${CHROMIUM}; install chromium or set CHROMIUM)`,
  () => {
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'case-read-sar-template-'));
      content = await realAnswer();
      browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-dev-shm-usage'],
        userDataDir: join(dir, 'profile'),
        timeout: BROWSER_TIMEOUT,
      });
    }, 2 * BROWSER_TIMEOUT);

    afterAll(async () => {
      await browser?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('shows every field of the content, by mustache and by Handlebars alike', async () => {
      expect((content.disclosures as Json[]).length).toBe(4);
      expect(leaves(content).length).toBeGreaterThan(40);
      const pages = render(TEMPLATE, content);
      const [byMustache, byHandlebars] = [await opened(pages.mustache), await opened(pages.handlebars)];
      expect(missingFrom(byMustache.text, content)).toEqual([]);
      expect(byHandlebars.text).toBe(byMustache.text);
      // The row of the request made for a member of staff, and of those the service made itself.
      expect(byMustache.text).toContain('jane.doe@example.gov.uk');
      expect(byMustache.text).toContain('The receiving service itself');
    });

    it('fails its check when the template drops a field', async () => {
      for (const tag of ['{{recipient}}', '{{requestId}}', '{{proof}}', '{{pdu}}', '{{notes}}']) {
        const page = await opened(Mustache.render(TEMPLATE.replaceAll(tag, ''), content));
        expect(missingFrom(page.text, content).length, tag).toBeGreaterThan(0);
      }
    });

    it('shows a value as text, never as markup', async () => {
      const page = await opened(render(TEMPLATE, content).handlebars);
      expect(page.text).toContain('Notes <script>alert(1)</script> & "quoted"');
      expect(page.scripts).toBe(0);
    });

    it('says no copy is held when there is no case, and none when there are no disclosures', async () => {
      const page = await opened(render(TEMPLATE, { crn: 'X123456', disclosures: [] }).mustache);
      expect(page.text).toContain('This service holds no copy of a case for this CRN.');
      expect(page.text).toContain('No request about this CRN was answered in the period asked for');
      expect(page.text).not.toContain('Home Office interest');
      const nullCase = await opened(
        render(TEMPLATE, { crn: 'X123456', case: null, disclosures: [] }).handlebars,
      );
      expect(nullCase.text).toBe(page.text);
    });
  },
);
