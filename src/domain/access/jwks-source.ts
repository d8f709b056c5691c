/**
 * Where a set of trusted token keys (a JWKS) is read from: `BEARER_JWKS`, and each client's
 * `--obo-jwks`. Either an `https://` URL, fetched by the verifier over verified TLS, or a
 * file path on the service's host (anything without a URL scheme). Any other URL is refused
 * where it is given (at start, or by `clients add`), not at the first request: over `http://`
 * the keys could be swapped on the way, and a token signed with the swapped key would be
 * taken as the issuer's (decisions §20). The one home of the rule.
 */

/** A URL scheme (`http://`, `file://`, `git+ssh://`): what a file path does not start with. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const HTTPS = /^https:\/\//i;

/** What a refused source is told. */
export const JWKS_SOURCE_RULE = 'expected a file path or an https:// URL';

/** Why `source` is not a JWKS source the verifier can use, or undefined when it is. */
export function jwksSourceProblem(source: string): string | undefined {
  if (source.trim() === '') return JWKS_SOURCE_RULE;
  if (HTTPS.test(source))
    return URL.canParse(source) ? undefined : `${JWKS_SOURCE_RULE} (this URL does not parse)`;
  return SCHEME.test(source) ? JWKS_SOURCE_RULE : undefined;
}
