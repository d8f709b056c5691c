import { existsSync } from 'node:fs';
import { StoreError } from '../../ports/stores.js';

/** How the store kinds read their URLs: the parts they share. */

/** The URL parsed, or `undefined` when it is not one (the kind then says what form it expected). */
export function parsedUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** The URL with any password masked, for logs and `config check`. */
export function maskedUrl(url: string, unparseable: string): string {
  const parsed = parsedUrl(url);
  if (parsed === undefined) return unparseable;
  if (parsed.password !== '') parsed.password = '********';
  return parsed.toString();
}

/**
 * A kind named by a prefix and a path on this machine (`sqlite:PATH`, `jsonl:PATH`): how it
 * recognises its URLs, what it says of one whose path is missing or does not name what the
 * kind keeps there (`a file`, or `a directory` for a kind that keeps one), and the path.
 */
export function fileUrls(prefix: string, example: string, keeps: 'a file' | 'a directory' = 'a file') {
  const pathOf = (url: string) => url.slice(prefix.length);
  const needs = `${prefix} needs the path of ${keeps}, e.g. ${prefix}${example}`;
  return {
    pathOf,
    recognises: (url: string) => url.startsWith(prefix),
    problem: (url: string) => {
      const path = pathOf(url);
      if (path.length === 0) return needs;
      // `sqlite:/srv/data/` names a directory: the kind would fail to open it as a file, later.
      if (keeps === 'a file' && /[/\\]$/.test(path)) return `${prefix}${path} names a directory; ${needs}`;
      return undefined;
    },
    display: (url: string) => url,
  };
}

/** The audit commands read an existing trail and never create one: a missing file is refused. */
export function requireExistingAudit(path: string): void {
  if (!existsSync(path)) throw new StoreError(`audit store ${path} does not exist`);
}
