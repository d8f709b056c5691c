/**
 * What a test needs to check the subject access template (decisions §22) as the estate's
 * renderer uses it: the template file, its rendering by mustache checked against Handlebars,
 * every leaf of a content, and a rendered page's visible text in headless Chromium.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import Mustache from 'mustache';
import puppeteer, { type Page } from 'puppeteer-core';
import { SAR_TEMPLATE_FILE } from '../../src/app/composition/subject-access.js';

/** The template file the service answers GET /subject-access-request/template with, as text. */
export const readSarTemplate = (): string => readFileSync(SAR_TEMPLATE_FILE, 'utf8');

/** The two engines gave different HTML for one template and content. */
export class SarRenderingsDiffer extends Error {
  override readonly name = 'SarRenderingsDiffer';
}

/** Where `a` and `b` first differ, with some text either side, for a message. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 60), i + 60));
  return `at offset ${i}: mustache ${around(a)}, Handlebars ${around(b)}`;
}

/**
 * The HTML mustache renders `content` with (its defaults, as the estate's renderer), having
 * checked that Handlebars, compiled with its defaults, renders the same string.
 *
 * The one difference the template cannot avoid is the spelling of two escaped characters:
 * mustache.js writes `/` as `&#x2F;` and `'` as `&#39;`; Handlebars leaves `/` as it is and
 * writes `'` as `&#x27;` (every other printable ASCII character is escaped alike; the test
 * holds the two escape functions to that). Each spelling is a character reference the HTML
 * parser reads as the same character, and no plain-mustache construct changes how a value is
 * escaped (only `{{{ }}}` and `{{& }}`, which send a value unescaped and are not allowed).
 * So Handlebars' string is compared, byte for byte, with mustache's rendering given
 * Handlebars' escape function (mustache.js's own `escape` option): nothing is normalised,
 * and everything else that could differ (sections on empty or falsy values, lookups in an
 * enclosing context, the lines standalone tags take away) must come out identical.
 */
export function renderSar(content: unknown, template: string = readSarTemplate()): string {
  const html = Mustache.render(template, content);
  const byHandlebars = Handlebars.compile(template)(content);
  const byMustache = Mustache.render(template, content, {}, { escape: Handlebars.escapeExpression });
  if (byHandlebars !== byMustache) {
    throw new SarRenderingsDiffer(
      `Handlebars renders the subject access template differently ${firstDifference(byMustache, byHandlebars)}`,
    );
  }
  return html;
}

/** One leaf value of a content: where it is (`content.case.riskScores[0].completedDate`) and what. */
export interface Leaf {
  readonly path: string;
  readonly value: string | number | boolean;
}

/** Every leaf of `content` (strings, numbers, booleans), in document order; null and absent are not leaves. */
export function contentLeaves(content: unknown, path = 'content'): Leaf[] {
  if (content === null || content === undefined) return [];
  if (Array.isArray(content)) return content.flatMap((item, i) => contentLeaves(item, `${path}[${i}]`));
  if (typeof content === 'object') {
    return Object.entries(content).flatMap(([key, item]) => contentLeaves(item, `${path}.${key}`));
  }
  if (typeof content === 'string' || typeof content === 'number' || typeof content === 'boolean') {
    return [{ path, value: content }];
  }
  throw new TypeError(`${path} is a ${typeof content}, which JSON does not hold`);
}

/** Debian's Chromium, or the one `CHROMIUM` names. */
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** Why the Chromium tests are skipped, for the suite's name. */
export const CHROMIUM_MISSING = `skipped: no ${CHROMIUM}; install chromium or set CHROMIUM`;

/** Whether Chromium is here; under CI (`.ci/run` installs it) its absence fails instead of skipping. */
export function chromiumPresent(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) throw new Error(`${CHROMIUM} is not installed: .ci/run installs chromium`);
  return false;
}

/** Generous for a slow machine with another test file beside it: the browser starts in 1 to 2 s here. */
export const BROWSER_TIMEOUT = 90_000;

/** Opens HTML in one headless Chromium page, scripts off and every request refused. */
export interface PageReader {
  /**
   * The page's visible text (`innerText` of its body: table cells apart by tabs, rows and
   * blocks by line breaks, a `<pre>`'s lines kept) with `html` as the body. Throws when the
   * page asked for anything (an image, a style sheet): the report's section stands alone.
   */
  visibleText(html: string): Promise<string>;
  /** How many elements of that page match `selector`. */
  count(html: string, selector: string): Promise<number>;
  close(): Promise<void>;
}

/** Launches Chromium as test/app/openapi-html.test.ts does: puppeteer-core on Debian's binary. */
export async function openChromium(): Promise<PageReader> {
  const profile = mkdtempSync(join(tmpdir(), 'case-read-sar-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // CI runs as root, where Chromium's sandbox cannot start; a small /dev/shm in a container.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
    userDataDir: profile,
    timeout: BROWSER_TIMEOUT,
  });
  // One page, reused: a fresh one costs about 200 ms. Its content is replaced whole each time,
  // one at a time (`queue`), with scripts off and every request it makes refused and recorded.
  const page = await browser.newPage();
  page.setDefaultTimeout(BROWSER_TIMEOUT);
  await page.setJavaScriptEnabled(false);
  await page.setRequestInterception(true);
  let asked: string[] = [];
  page.on('request', (request) => {
    asked.push(request.url());
    void request.abort();
  });
  let queue: Promise<unknown> = Promise.resolve();
  function opened<T>(html: string, read: (page: Page) => Promise<T>): Promise<T> {
    const run = async () => {
      asked = [];
      await page.setContent(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Subject access report</title></head><body>${html}</body></html>`,
        { waitUntil: 'load' },
      );
      if (asked.length > 0) throw new Error(`the page asked for ${asked.join(', ')}`);
      return read(page);
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  }
  return {
    visibleText: (html) => opened(html, (page) => page.$eval('body', (body) => body.innerText)),
    count: (html, selector) => opened(html, (page) => page.$$eval(selector, (found) => found.length)),
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
