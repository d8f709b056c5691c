/**
 * The PostgreSQL store URL: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?schema=NAME]`.
 * Kept apart from the driver so that checking a configuration never loads it.
 */

import { maskedUrl, parsedUrl } from '../shared/store-urls.js';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const ALLOWED_PARAMS = new Set(['schema']);

export interface PostgresTarget {
  /** The URL the driver connects with, without the schema parameter. */
  readonly connectionString: string;
  readonly schema: string;
}

export function postgresUrlProblem(url: string): string | undefined {
  const parsed = parsedUrl(url);
  if (parsed === undefined) return 'expected postgres://USER@HOST:PORT/DB[?schema=NAME]';
  if (parsed.hostname === '') return 'postgres:// needs a host: postgres://USER@HOST:PORT/DB[?schema=NAME]';
  if (parsed.pathname.length <= 1) {
    return 'postgres:// needs a database: postgres://USER@HOST:PORT/DB[?schema=NAME]';
  }
  for (const key of parsed.searchParams.keys()) {
    if (!ALLOWED_PARAMS.has(key)) return `postgres:// takes only ?schema=NAME, not ?${key}`;
  }
  const schema = parsed.searchParams.get('schema');
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    return 'schema must be 1-63 lower-case letters, digits or underscores, not starting with a digit';
  }
  return undefined;
}

export function targetOf(url: string): PostgresTarget {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  parsed.search = '';
  return { connectionString: parsed.toString(), schema };
}

/** The URL as it may be shown: the password, if any, masked. */
export const displayPostgresUrl = (url: string): string => maskedUrl(url, 'postgres://(unparseable)');
