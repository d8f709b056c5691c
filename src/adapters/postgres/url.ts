/**
 * The PostgreSQL store URL:
 * `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?schema=NAME][&sslmode=MODE&sslrootcert=FILE&sslcert=FILE&sslkey=FILE]`.
 * Kept apart from the driver so that checking a configuration never loads it.
 *
 * The TLS parameters are libpq's, with libpq's meanings (decisions §17), so that an operator's
 * `psql` URL means the same here: `disable`, `require` (encrypted, not verified; as in libpq,
 * verified as `verify-ca` when `sslrootcert` is given), `verify-ca` (the chain),
 * `verify-full` (the chain and the host name). No `sslmode`: no TLS. libpq's `prefer` and
 * `allow`, which fall back to plaintext, and node-postgres's `no-verify` are refused.
 */

import type { StoreHop, TlsAssurance } from '../../ports/stores.js';
import { isLoopbackHost } from '../shared/loopback.js';
import { maskedUrl, parsedUrl } from '../shared/store-urls.js';

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const TLS_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey'] as const;
const ALLOWED_PARAMS = new Set<string>(['schema', ...TLS_PARAMS]);
const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** `sslrootcert=system`: the runtime's own public CAs (libpq 16's spelling), only with `verify-full`. */
export const SYSTEM_ROOTS = 'system';

/** The TLS a store URL asks for: plain data, the files not yet read. */
export interface PostgresTls {
  readonly assurance: TlsAssurance;
  /** A CA bundle file, or {@link SYSTEM_ROOTS}. */
  readonly rootCert?: string;
  readonly cert?: string;
  readonly key?: string;
}

export interface PostgresTarget {
  /** The URL the driver connects with, without the schema and TLS parameters. */
  readonly connectionString: string;
  readonly schema: string;
  readonly tls: PostgresTls;
}

const FORM = 'postgres://USER@HOST:PORT/DB[?schema=NAME&sslmode=verify-full&sslrootcert=FILE]';

export function postgresUrlProblem(url: string): string | undefined {
  const parsed = parsedUrl(url);
  if (parsed === undefined) return `expected ${FORM}`;
  if (parsed.hostname === '') return `postgres:// needs a host: ${FORM}`;
  if (parsed.pathname.length <= 1) return `postgres:// needs a database: ${FORM}`;
  const params = parsed.searchParams;
  for (const key of params.keys()) {
    if (!ALLOWED_PARAMS.has(key)) {
      return `postgres:// takes only ?schema=, sslmode=, sslrootcert=, sslcert= and sslkey=, not ?${key}`;
    }
    if (params.getAll(key).length > 1) return `postgres:// takes ?${key}= once`;
  }
  const schema = params.get('schema');
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    return 'schema must be 1-63 lower-case letters, digits or underscores, not starting with a digit';
  }
  return tlsProblem(params);
}

function tlsProblem(params: URLSearchParams): string | undefined {
  const mode = params.get('sslmode');
  if (mode !== null && !(SSL_MODES as readonly string[]).includes(mode)) {
    return `sslmode must be disable, require, verify-ca or verify-full, not ${mode} (prefer and allow fall back to plaintext; no-verify verifies nothing)`;
  }
  for (const name of ['sslrootcert', 'sslcert', 'sslkey'] as const) {
    const value = params.get(name);
    if (value === '') return `${name} needs a file path`;
    if (value !== null && (mode === null || mode === 'disable')) {
      return `${name} needs sslmode=require, verify-ca or verify-full (no sslmode means no TLS)`;
    }
  }
  if (params.has('sslcert') !== params.has('sslkey')) return 'sslcert and sslkey go together';
  const rootCert = params.get('sslrootcert');
  if ((mode === 'verify-ca' || mode === 'verify-full') && rootCert === null) {
    return `sslmode=${mode} needs sslrootcert=FILE (the CA bundle that signed the server's certificate; sslrootcert=system for the public CAs)`;
  }
  if (rootCert === SYSTEM_ROOTS && mode !== 'verify-full') {
    return 'sslrootcert=system needs sslmode=verify-full (any public CA could vouch for any server otherwise)';
  }
  return undefined;
}

function tlsOf(params: URLSearchParams): PostgresTls {
  const mode = params.get('sslmode');
  const rootCert = params.get('sslrootcert') ?? undefined;
  const files = {
    ...(rootCert !== undefined ? { rootCert } : {}),
    ...(params.has('sslcert') ? { cert: params.get('sslcert') as string } : {}),
    ...(params.has('sslkey') ? { key: params.get('sslkey') as string } : {}),
  };
  if (mode === null || mode === 'disable') return { assurance: 'none' };
  // libpq: `require` with a root certificate verifies the chain, as `verify-ca` does.
  if (mode === 'require') return { assurance: rootCert === undefined ? 'encrypted' : 'verify-ca', ...files };
  return { assurance: mode as 'verify-ca' | 'verify-full', ...files };
}

/** The URL split into what the driver connects to, the schema and the TLS; the URL must have no {@link postgresUrlProblem}. */
export function targetOf(url: string): PostgresTarget {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  const tls = tlsOf(parsed.searchParams);
  parsed.search = '';
  return { connectionString: parsed.toString(), schema, tls };
}

/** The URL as it may be shown: the password, if any, masked. */
export const displayPostgresUrl = (url: string): string => maskedUrl(url, 'postgres://(unparseable)');

/** The hop to the database, for `config check` and the production posture. */
export function postgresHop(url: string): StoreHop {
  const parsed = new URL(url);
  return {
    to: `${parsed.hostname}:${parsed.port || 5432}`,
    loopback: isLoopbackHost(parsed.hostname),
    tls: tlsOf(parsed.searchParams).assurance,
    fix: 'add sslmode=verify-full&sslrootcert=FILE to the URL (the CA bundle of the database server, e.g. the RDS bundle)',
  };
}
