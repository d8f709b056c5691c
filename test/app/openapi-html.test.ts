import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

/**
 * `case-read openapi --html FILE` (docs/decisions/0024): the API reference as one file,
 * opened from the disk in a real browser, Debian's Chromium driven by puppeteer-core. Every
 * request the page makes but the file's own is aborted and recorded: there must be none,
 * with every operation opened. `.ci/run` installs Chromium; `CHROMIUM` names another.
 */
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is not installed: .ci/run installs chromium`);

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface OpenApi {
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
}

/** Each operation of the document, as `METHOD /path`, sorted. */
const operationsOf = (openapi: OpenApi) =>
  Object.entries(openapi.paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();

/** Swagger UI's operations on the page, as `METHOD /path`, sorted, once each. */
const shownOperations = (page: Page) =>
  page.$$eval('.opblock', (blocks) =>
    [
      ...new Set(
        blocks.map(
          (block) =>
            `${block.querySelector('.opblock-summary-method')?.textContent} ${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
        ),
      ),
    ].sort(),
  );

// Generous for a machine twice as slow as this one with another test file beside it: the
// browser starts in 1 to 2 s here and the page (2 MB of script) is drawn in about as long.
const BROWSER_TIMEOUT = 90_000;

describe.skipIf(!available)(
  available
    ? 'case-read openapi --html FILE, opened in Chromium'
    : `case-read openapi --html FILE, opened in Chromium (skipped: no ${CHROMIUM}; install chromium or set CHROMIUM)`,
  () => {
    let dir: string;
    let file: string;
    let openapi: OpenApi;
    let browser: Browser | undefined;
    let page: Page;
    /** Requests for anything but the file (or a `data:`/`blob:` URL inside it): aborted. */
    const elsewhere: string[] = [];
    /** Console errors and uncaught exceptions of the page. */
    const errors: string[] = [];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'case-read-api-reference-'));
      file = join(dir, 'api-reference.html');
      const written = runCli(['openapi', '--html', file]);
      if (written.status !== 0) throw new Error(`case-read openapi --html failed: ${written.stderr}`);
      openapi = JSON.parse(runCli(['openapi']).stdout) as OpenApi;

      browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        // CI runs as root, where Chromium's sandbox cannot start; a small /dev/shm in a container.
        args: ['--no-sandbox', '--disable-dev-shm-usage'],
        userDataDir: join(dir, 'profile'),
        timeout: BROWSER_TIMEOUT,
      });
      page = await browser.newPage();
      page.setDefaultTimeout(BROWSER_TIMEOUT);
      const self = pathToFileURL(file).href;
      await page.setRequestInterception(true);
      page.on('request', (request) => {
        const url = request.url();
        if (url === self || url.startsWith('data:') || url.startsWith('blob:'))
          return void request.continue();
        elsewhere.push(url);
        return void request.abort();
      });
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => errors.push(`page: ${error}`));
      await page.goto(self, { waitUntil: 'load' });
    }, 2 * BROWSER_TIMEOUT);

    afterAll(async () => {
      await browser?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('is titled with the service and its version', async () => {
      expect(await page.title()).toBe(`${openapi.info.title} ${openapi.info.version}: API reference`);
    });

    it(
      'shows every operation of the document, and nothing else',
      async () => {
        const expected = operationsOf(openapi);
        expect(expected.length).toBeGreaterThan(0);
        // Swagger UI draws the operations within a second of the page's load here; one
        // missing from the page shows in the comparison below, after this wait gives up.
        await page
          .waitForFunction(
            (n) => document.querySelectorAll('.opblock').length >= n,
            { timeout: 30_000 },
            expected.length,
          )
          .catch(() => undefined);
        expect(await shownOperations(page)).toEqual(expected);
      },
      2 * BROWSER_TIMEOUT,
    );

    it(
      'opens every operation with each of its references resolved',
      async () => {
        await page.$$eval('.opblock-summary-control', (controls) => {
          for (const control of controls) (control as unknown as PageElement).click();
        });
        // Each operation's subtree is resolved (swagger-client, in the page) when it opens.
        await page.waitForFunction(() => {
          const { ui } = window;
          return [...document.querySelectorAll('.opblock')].every((block) => {
            const method = block.querySelector('.opblock-summary-method')?.textContent?.toLowerCase();
            const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path');
            return (
              block.querySelector('.opblock-body') !== null &&
              ui.specSelectors.specResolvedSubtree(['paths', path, method]) !== undefined
            );
          });
        });
        const uiErrors = await page.evaluate(() => window.ui.errSelectors.allErrors().toJS());
        expect(uiErrors).toEqual([]);
        expect(await page.$$eval('.errors-wrapper', (shown) => shown.length)).toBe(0);
      },
      2 * BROWSER_TIMEOUT,
    );

    // Last: after the page was drawn and every operation opened.
    it('asked for nothing beyond the file, and logged no error', () => {
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
    });
  },
);

// What the functions run in the page read there (the project's type-check has no DOM library).
interface PageElement {
  readonly textContent: string | null;
  querySelector(selector: string): PageElement | null;
  getAttribute(name: string): string | null;
  click(): void;
}
declare const document: {
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
};
/** Swagger UI's system, which the page sets as `window.ui`. */
declare const window: {
  ui: {
    specSelectors: { specResolvedSubtree(path: unknown[]): unknown };
    errSelectors: { allErrors(): { toJS(): unknown[] } };
  };
};
