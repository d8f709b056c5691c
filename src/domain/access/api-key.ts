/**
 * API keys look like `crs_<id>_<secret>`: a recognisable prefix for secret scanners, a
 * public id (to find the stored hash) and a secret of at least 256 bits, base64url.
 */
export const API_KEY_PREFIX = 'crs';
const KEY_ID = /^[a-z0-9]{16}$/;
const SECRET = /^[A-Za-z0-9_-]{43,86}$/;

export interface ParsedApiKey {
  readonly id: string;
  readonly secret: string;
}

/** Splits a presented key; `undefined` when it is not of the key shape at all. */
export function parseApiKey(raw: string): ParsedApiKey | undefined {
  if (raw.length > 128) return undefined;
  const first = raw.indexOf('_');
  const second = raw.indexOf('_', first + 1);
  if (first < 0 || second < 0 || raw.slice(0, first) !== API_KEY_PREFIX) return undefined;
  const id = raw.slice(first + 1, second);
  const secret = raw.slice(second + 1);
  if (!KEY_ID.test(id) || !SECRET.test(secret)) return undefined;
  return { id, secret };
}

export function formatApiKey(id: string, secret: string): string {
  if (!KEY_ID.test(id) || !SECRET.test(secret)) throw new Error('key id or secret is not of the key shape');
  return `${API_KEY_PREFIX}_${id}_${secret}`;
}
