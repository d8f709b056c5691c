import { describe, expect, it } from 'vitest';
import { fixtureApp } from '../../support/http.js';

const assets = { css: '.swagger-ui{}', bundleJs: 'window.SwaggerUIBundle=function(){};' };
const app = fixtureApp({ docs: assets });

describe('/docs', () => {
  it('serves a page that loads only local assets', async () => {
    const response = await app.request('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await response.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources).toEqual(['docs/swagger-ui.css', 'docs/swagger-ui-bundle.js', 'docs/init.js']);
    expect(html).not.toMatch(/https?:\/\//);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
  });

  it.each(['/docs', '/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/init.js'])(
    '%s carries what a browser page needs, beside the API set',
    async (path) => {
      const response = await app.request(path);
      expect(Object.fromEntries(response.headers)).toMatchObject({
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-resource-policy': 'same-origin',
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'strict-transport-security': 'max-age=31536000',
        'content-security-policy': expect.stringContaining("script-src 'self'"),
      });
    },
  );

  it('leaves the API without them', async () => {
    const response = await app.request('/case/X123456');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'",
    );
    for (const name of ['cross-origin-opener-policy', 'cross-origin-resource-policy', 'referrer-policy']) {
      expect(response.headers.get(name), name).toBeNull();
    }
  });

  it('serves the assets it was given, with their content types', async () => {
    const css = await app.request('/docs/swagger-ui.css');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toBe(assets.css);
    const js = await app.request('/docs/swagger-ui-bundle.js');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toBe(assets.bundleJs);
  });

  it('points the UI at the served document, with the external validator off', async () => {
    const init = await (await app.request('/docs/init.js')).text();
    expect(init).toContain("url: 'openapi.json'");
    expect(init).toContain('validatorUrl: null');
  });

  it('is absent when no assets are configured', async () => {
    expect((await fixtureApp().request('/docs')).status).toBe(404);
  });
});
