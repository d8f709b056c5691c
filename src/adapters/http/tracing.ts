import { context, propagation, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.js';

const headerGetter = {
  get: (headers: Headers, key: string) => headers.get(key) ?? undefined,
  keys: (headers: Headers) => [...headers.keys()],
};

/**
 * `/case/:crn` as OpenAPI writes it: `/case/{crn}`. Made once per route (a route path is one
 * of the app's own, never a request's path), not on every request.
 */
const templates = new Map<string, string>();
function templateOf(routePath: string): string {
  let template = templates.get(routePath);
  if (template === undefined) {
    template = routePath.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');
    templates.set(routePath, template);
  }
  return template;
}

/**
 * One server span per request (decisions §10): an incoming `traceparent` is continued, and
 * the span is the active one while the request is served, so the store calls and outgoing
 * calls made for it are its children. Named by the route template once routing is done
 * (`GET /case/{crn}`); its attributes are the method, the route template, the status, the
 * request id (as in the audit trail) and the client's name: never the path, a crn, a header
 * value, a key or a token.
 */
export function serverSpans(tracer: Tracer): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const parent = propagation.extract(context.active(), c.req.raw.headers, headerGetter);
    const method = c.req.method;
    const span = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'url.scheme': 'https' } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = templateOf(c.req.routePath);
      const status = c.res.status;
      const admitted = c.get('admitted');
      span.updateName(`${method} ${route}`);
      span.setAttributes({
        'http.route': route,
        'http.response.status_code': status,
        'case_read.request_id': c.get('requestId') ?? '',
        // Only a client the perimeter admitted: a refused one's name is whatever it claimed.
        ...(admitted ? { 'case_read.client': admitted.client.id } : {}),
      });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
