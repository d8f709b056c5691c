import type { Context, Hono } from 'hono';
import type { AppEnv } from './env.js';
import { respond } from './respond.js';

/** The Swagger UI files, read from the swagger-ui-dist package by the composition root. */
export interface DocsAssets {
  readonly css: string;
  readonly bundleJs: string;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Case Information Read Service: API documentation</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });
});
`;

/** A stricter policy than the API's cannot render the UI; it still loads nothing from elsewhere. */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The docs are the one part a browser opens: beside the API's set (which has no header for
 * browsers, docs/decisions/0017), its own policy and what keeps a page to itself: opened by
 * no other window, embedded in no other site, and naming no page in a `Referer`.
 */
const DOCS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': DOCS_CSP,
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
});

/** Serves the docs UI at /docs from local assets: no CDN is ever contacted. */
export function mountDocs(app: Hono<AppEnv>, assets: DocsAssets): void {
  const serve = (body: string, contentType: string) => (c: Context<AppEnv>) =>
    respond(c, 200, body, contentType, DOCS_HEADERS);
  app.get('/docs', serve(PAGE, 'text/html; charset=utf-8'));
  app.get('/docs/swagger-ui.css', serve(assets.css, 'text/css; charset=utf-8'));
  app.get('/docs/swagger-ui-bundle.js', serve(assets.bundleJs, 'text/javascript; charset=utf-8'));
  app.get('/docs/init.js', serve(INIT, 'text/javascript; charset=utf-8'));
}
