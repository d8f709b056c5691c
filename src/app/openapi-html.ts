import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { CommandError } from './commands/exit.js';

/**
 * The API reference as one HTML file (`case-read openapi --html FILE`, issue 56;
 * docs/decisions/0024): Swagger UI from the swagger-ui-dist package (the one `/docs` serves
 * behind the perimeter), its script and stylesheet inlined and the OpenAPI document embedded,
 * so that the operator can hand consumers a page that opens from a disk, a share or a mail
 * attachment. Nothing is fetched, from here or from a CDN: no `src` or `href` names anything
 * outside the file, the validator badge is off (`validatorUrl: null`), "Try it out" is off
 * (a reference sends no request), and the page's own Content-Security-Policy lets the
 * browser load nothing but the two scripts in it (by hash), its style and `data:` images.
 *
 * Text inlined in `<script>` and `<style>` cannot end its element early: `</script` and
 * `<!--` in the bundle (in its string and regular-expression literals and comments, where
 * JavaScript reads `\x3C` as `<`) and `</style` in the stylesheet are escaped, and the
 * document is JSON in a `<script type="application/json">` with every `<` written `\u003c`.
 */

/** What the page reads of the document: the rest is handed to Swagger UI as it is. */
export interface OpenApiDocument {
  readonly info: { readonly title: string; readonly version: string };
  readonly [key: string]: unknown;
}

/** Swagger UI's files and notices, read from the installed swagger-ui-dist (from src/ or dist/ alike). */
function swaggerUi() {
  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const read = (name: string) => readFileSync(join(root, name), 'utf8');
  const { version, license } = JSON.parse(read('package.json')) as { version: string; license: string };
  return {
    version,
    // Apache-2.0 asks that its text and the NOTICE go with every copy; the bundle's own file
    // holds the notices of the libraries bundled in it (a series of /*! */ comments).
    notices: `/*! swagger-ui-dist ${version} (${license}), inlined by case-read openapi --html.\n\n${read('NOTICE')}\n${read('LICENSE').replaceAll('*/', '* /')}*/\n${read('swagger-ui-bundle.js.LICENSE.txt')}\n`,
    bundle: withoutSourceMap(read('swagger-ui-bundle.js')),
    css: withoutSourceMap(read('swagger-ui.css')),
  };
}

/** A source map is named by a relative URL that would be looked for beside the file: dropped. */
const withoutSourceMap = (text: string) => text.replace(/\n?\/[*/]# sourceMappingURL=[^\n]*\s*$/, '\n');

/** Script text the HTML parser reads to its end: no `</script` to close it, no `<!--` to escape it. */
const scriptText = (js: string) => js.replace(/<(?=\/script|!--)/gi, '\\x3C');

/** Style text the HTML parser reads to its end. */
const styleText = (css: string) => css.replace(/<\/(?=style)/gi, '<\\/');

/** JSON in a data block: `<` appears only in its strings, where `\u003c` reads the same. */
const jsonBlock = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const html = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * Swagger UI over the embedded document. `url` is read as the base of the document's own
 * `#/components/…` references, and swagger-client resolves an OpenAPI 3.1 reference only
 * against an http(s) base: from the page's `file://` address every one fails on an
 * operation's opening ("Could not resolve reference: Evaluation failed on URI",
 * swagger-api/swagger-js's 3.1 dereference strategy). So the document is given a base of
 * its own in a reserved domain (RFC 2606): never fetched (the document is in the page;
 * `connect-src 'none'` forbids it anyway), and not shown (the info block's link is dropped).
 */
const INIT = `
window.ui = SwaggerUIBundle({
  spec: JSON.parse(document.getElementById('openapi-document').textContent),
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  supportedSubmitMethods: [],
  queryConfigEnabled: false,
  plugins: [function () {
    return {
      statePlugins: {
        spec: {
          wrapSelectors: {
            url: function (url) {
              return function () { return url.apply(null, arguments) || 'https://api-reference.invalid/openapi.json'; };
            },
          },
        },
      },
      wrapComponents: { InfoUrl: function () { return function () { return null; }; } },
    };
  }],
});
`;

/** The API reference page for `document`: one HTML string, everything it needs inside it. */
export function renderApiReference(document: OpenApiDocument): string {
  const ui = swaggerUi();
  const bundle = scriptText(ui.notices + ui.bundle);
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(bundle)} ${sha256(INIT)}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const title = `${document.info.title} ${document.info.version}: API reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="case-read openapi --html (swagger-ui-dist ${html(ui.version)})">
<title>${html(title)}</title>
<link rel="icon" href="data:,">
<style>${styleText(ui.css)}</style>
</head>
<body>
<noscript>This API reference is drawn by JavaScript (Swagger UI, inside this file): allow it to run.</noscript>
<div id="swagger-ui"></div>
<script type="application/json" id="openapi-document">${jsonBlock(document)}</script>
<script>${bundle}</script>
<script>${INIT}</script>
</body>
</html>
`;
}

/**
 * Writes {@link renderApiReference} of `document` to `file` (mode 0644) through a temporary
 * file beside it, renamed over it: a reader never sees part of a page. Returns the page's size
 * in bytes; a file that cannot be written is a CommandError naming it.
 */
export function writeApiReference(file: string, document: OpenApiDocument): number {
  const page = Buffer.from(renderApiReference(document), 'utf8');
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(temporary, page, { mode: 0o644 });
    chmodSync(temporary, 0o644); // whatever the umask: a page to hand on
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    throw new CommandError(`${file} cannot be written (${code ?? (error as Error).message})`);
  }
  return page.length;
}
