import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';
import type { JsonText } from '../../domain/types.js';
import type { AppEnv, ResponseHeaders } from './env.js';

/*
 * Response headers as a plain object of lower-case names, one per request, filled as the
 * request passes each step and handed to the Response as it is. Not a `Headers`: each
 * `Headers.set` validates and sorts, and the Node adapter then turns `Headers` back into an
 * object, which together cost about a tenth of a request (see docs/performance.md). A
 * plain object goes to `writeHead` untouched, and Node still validates every name and value
 * there. Every response the API sends is built by {@link respond}, so none leaves without
 * these headers.
 */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * What every API response carries: the OWASP REST Security Cheat Sheet's set for an API
 * (decisions §16, docs/decisions/0017), then our own. The callers are services, never
 * browsers, so the headers only a browser reads (COOP, CORP, Origin-Agent-Cluster,
 * X-DNS-Prefetch-Control, X-Download-Options, X-Permitted-Cross-Domain-Policies,
 * X-XSS-Protection, Referrer-Policy) are not sent; the docs page adds what a page needs.
 */
const BASE_HEADERS: Readonly<ResponseHeaders> = Object.freeze({
  // The guard changes this to `no-store, private` for on-behalf-of requests.
  'cache-control': 'no-store',
  // The API answers JSON only: nothing may be loaded or framed. The docs UI sets its own.
  'content-security-policy': API_CSP,
  'strict-transport-security': 'max-age=31536000',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

/** A new request's headers: the constant set and its request id. */
export function startHeaders(requestId: string): ResponseHeaders {
  return { ...BASE_HEADERS, 'x-request-id': requestId };
}

/** Sets a response header for this request (lower-case name), whatever response it ends in. */
export function setHeader(c: Context<AppEnv>, name: string, value: string): void {
  const headers = c.get('headers');
  if (headers !== undefined) headers[name] = value;
}

/**
 * The response: the request's headers, the content type and any `extra` (a problem's
 * `Retry-After`, say). A request that never reached the first middleware (there is none)
 * still gets the constant set.
 */
export function respond(
  c: Context<AppEnv>,
  status: number,
  body: string | ReadableStream<Uint8Array> | null,
  contentType: string | null,
  extra?: Readonly<Record<string, string>>,
): Response {
  const headers = c.get('headers') ?? { ...BASE_HEADERS };
  if (contentType !== null) headers['content-type'] = contentType;
  if (extra !== undefined) for (const name in extra) headers[name.toLowerCase()] = extra[name] as string;
  return new Response(body, { status, headers });
}

/**
 * A JSON response whose body type is known: what `c.json` gives, so a handler's return is
 * checked against its route's declared responses (`RouteHandler`). The body type lives in
 * the type only; the response itself is the one {@link respond} builds.
 */
export type JsonResponse<T, S extends ContentfulStatusCode> = Response &
  TypedResponse<JSONParsed<T>, S, 'json'>;

/**
 * The one place the body type is attached: the value handed in is what the body holds.
 * (`TypedResponse` is a phantom type; hono's own `c.json` attaches it the same way.)
 */
const typed = <T, S extends ContentfulStatusCode>(response: Response): JsonResponse<T, S> =>
  response as JsonResponse<T, S>;

/** A text response whose status is known, as `c.text` gives it (the same phantom type). */
export type TextResponse<S extends ContentfulStatusCode> = Response & TypedResponse<string, S, 'text'>;

/** `respond` with `text` as a text/plain body. */
export const respondText = <S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  status: S,
  text: string,
): TextResponse<S> => respond(c, status, text, 'text/plain; charset=utf-8') as TextResponse<S>;

/** `respond` with `value` as the JSON body. */
export const respondJson = <T, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  status: S,
  value: T,
): JsonResponse<T, S> => typed(respond(c, status, JSON.stringify(value), 'application/json'));

/** `respond` with JSON text that already holds a `T` (a store's stored document), sent as it is. */
export const respondJsonText = <T, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  status: S,
  text: JsonText<T>,
): JsonResponse<T, S> => typed(respond(c, status, text, 'application/json'));

/** A response with no body (204, and the estate's 209), with the request's headers. */
export const respondEmpty = (c: Context<AppEnv>, status: number): Response => respond(c, status, null, null);

/** `respond` with a stream of JSON text that holds a `T`, sent as it is produced. */
export const respondJsonStream = <T, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  status: S,
  stream: ReadableStream<Uint8Array>,
): JsonResponse<T, S> => typed(respond(c, status, stream, 'application/json'));
