/**
 * Subject distinguished names as TLS-terminating gateways send them (decisions §10), each
 * read by the rules of its own form, escapes included. What does not read cleanly, or reads
 * in more than one way, is refused: an identity is never guessed.
 *
 * - **RFC 4514 / RFC 2253** (`CN=client-a,O=Example,C=GB`): nginx `$ssl_client_s_dn`,
 *   Envoy's `Subject="…"`, AWS API Gateway. `,` separates RDNs (spaces after it are
 *   allowed), `+` joins the attributes of a multi-valued RDN; `\` escapes a special character (`\,` `\+` `\"` `\\` `\<` `\>`
 *   `\;` `\=` `\#` `\ `) or gives a byte as two hex digits (`\2C`, UTF-8).
 * - **OpenSSL legacy** (`/C=GB/O=Example/CN=client-a`): nginx `$ssl_client_s_dn_legacy`.
 *   This form escapes nothing: a `/` or `+` inside a value cannot be told from a
 *   separator. It is read only where that cannot matter: every segment must be `TYPE=value`
 *   with a known attribute type, the CN must be the last RDN and alone in it, and a
 *   backslash (OpenSSL's `\xHH` for a byte it would not print) refuses the name.
 *
 * Either way the name must hold exactly one CN, alone in its RDN, and not empty.
 */

export interface Attribute {
  /** Upper case (`CN`, `O`, …) or a dotted OID. */
  readonly type: string;
  readonly value: string;
}
/** One relative distinguished name: one attribute, or several for a multi-valued RDN. */
export type Rdn = readonly Attribute[];

export type DnResult = { readonly rdns: readonly Rdn[] } | { readonly problem: string };

const TYPE = /^(?:[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)+)$/;
/** The attribute types the legacy form may hold (OpenSSL short names). */
const LEGACY_TYPES = new Set([
  'C',
  'ST',
  'L',
  'O',
  'OU',
  'CN',
  'EMAILADDRESS',
  'SERIALNUMBER',
  'DC',
  'UID',
  'STREET',
  'TITLE',
  'GN',
  'SN',
  'INITIALS',
  'PSEUDONYM',
  'GENERATIONQUALIFIER',
  'DNQUALIFIER',
  'POSTALCODE',
  'BUSINESSCATEGORY',
  'JURISDICTIONC',
  'JURISDICTIONST',
  'JURISDICTIONL',
  'ORGANIZATIONIDENTIFIER',
]);
/** Characters RFC 4514 requires escaped in a value (a `#` or space only where it starts it). */
const SPECIAL = new Set([',', '+', '"', '\\', '<', '>', ';', '=', '#', ' ']);
const HEX = /^[0-9A-Fa-f]{2}$/;

/** Bytes that must be UTF-8; a leading U+FEFF kept (the decoder drops one by default: "\uFEFFadmin" would read "admin"). */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Bytes = new TextEncoder();

/** Whether the text holds a C0 control character or DEL. */
const hasControlCharacter = (text: string): boolean =>
  [...text].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);

/** Reads an RFC 4514 / RFC 2253 string. */
export function parseRfc4514(text: string): DnResult {
  const rdns: Attribute[][] = [];
  let rdn: Attribute[] = [];
  let i = 0;
  const problem = (what: string): DnResult => ({ problem: `${what} at character ${i + 1}` });
  if (text.trim() === '') return { problem: 'empty name' };
  for (;;) {
    // The attribute type, up to its `=` (spaces after a separator are allowed, RFC 2253 §4).
    while (text[i] === ' ') i += 1;
    const equals = text.indexOf('=', i);
    if (equals === -1) return problem('an attribute without "="');
    const type = text.slice(i, equals);
    if (!TYPE.test(type)) return problem(`an attribute type that is not one (${JSON.stringify(type)})`);
    i = equals + 1;
    // The value: escapes decoded as bytes, then read as UTF-8.
    const bytes: number[] = [];
    let trailingSpaces = 0;
    if (text[i] === '#') return problem('a value given as hex (#…)');
    if (text[i] === ' ') return problem('a value starting with an unescaped space');
    while (i < text.length && text[i] !== ',' && text[i] !== '+') {
      // One code point: a character outside the BMP is two UTF-16 units, encoded together.
      const ch = String.fromCodePoint(text.codePointAt(i) as number);
      if (ch === '\\') {
        const next = text[i + 1];
        const pair = text.slice(i + 1, i + 3);
        if (HEX.test(pair)) {
          bytes.push(Number.parseInt(pair, 16));
          i += 3;
        } else if (next !== undefined && SPECIAL.has(next)) {
          bytes.push(next.charCodeAt(0));
          i += 2;
        } else {
          return problem('a backslash that escapes nothing');
        }
        trailingSpaces = 0;
        continue;
      }
      if (ch === '"' || ch === ';' || ch === '<' || ch === '>')
        return problem(`an unescaped ${JSON.stringify(ch)}`);
      if (hasControlCharacter(ch)) return problem('a control character');
      trailingSpaces = ch === ' ' ? trailingSpaces + 1 : 0;
      bytes.push(...utf8Bytes.encode(ch));
      i += ch.length;
    }
    if (trailingSpaces > 0) return problem('a value ending in an unescaped space');
    let value: string;
    try {
      value = utf8.decode(new Uint8Array(bytes));
    } catch {
      return problem('a value that is not UTF-8');
    }
    rdn.push({ type: type.toUpperCase(), value });
    if (i >= text.length) break;
    const separator = text[i];
    i += 1;
    if (separator === ',') {
      rdns.push(rdn);
      rdn = [];
    }
    if (i >= text.length) return problem('a name ending in a separator');
  }
  rdns.push(rdn);
  return { rdns };
}

/** Reads the OpenSSL legacy one-line form, refusing what it cannot read unambiguously. */
export function parseLegacy(text: string): DnResult {
  if (!text.startsWith('/')) return { problem: 'a legacy name must start with "/"' };
  if (text.includes('\\')) return { problem: 'a backslash, which the legacy form cannot escape' };
  const rdns: Attribute[][] = [];
  for (const segment of text.slice(1).split('/')) {
    const rdn: Attribute[] = [];
    for (const part of segment.split('+')) {
      const equals = part.indexOf('=');
      const type = equals === -1 ? '' : part.slice(0, equals).toUpperCase();
      if (!LEGACY_TYPES.has(type)) {
        return { problem: `a segment that is not TYPE=value with a known type (${JSON.stringify(part)})` };
      }
      const value = part.slice(equals + 1);
      if (hasControlCharacter(value)) return { problem: 'a control character' };
      rdn.push({ type, value });
    }
    rdns.push(rdn);
  }
  const cnAt = rdns.findIndex((rdn) => rdn.some((a) => a.type === 'CN'));
  if (cnAt !== -1 && cnAt !== rdns.length - 1) {
    return { problem: 'a CN that is not the last RDN, which the legacy form cannot tell from a "/" in it' };
  }
  return { rdns };
}

/** The name's single CN: exactly one, alone in its RDN, not empty. */
export function commonNameIn(
  result: DnResult,
): { readonly commonName: string } | { readonly problem: string } {
  if ('problem' in result) return result;
  const cns = result.rdns.flatMap((rdn) => rdn.filter((a) => a.type === 'CN').map((a) => ({ rdn, a })));
  if (cns.length === 0) return { problem: 'no CN' };
  if (cns.length > 1) return { problem: 'more than one CN' };
  const [{ rdn, a }] = cns as [{ rdn: Rdn; a: Attribute }];
  if (rdn.length > 1) return { problem: 'a CN in a multi-valued RDN' };
  if (a.value === '') return { problem: 'an empty CN' };
  return { commonName: a.value };
}

/** The CN of a subject DN in either form: the legacy form when it starts with `/`. */
export function subjectCommonName(
  dn: string,
): { readonly commonName: string } | { readonly problem: string } {
  return commonNameIn(dn.startsWith('/') ? parseLegacy(dn) : parseRfc4514(dn));
}

/**
 * Envoy's `x-forwarded-client-cert`: one element (`key=value;…`, keys in lower case; a
 * value holding `,`, `;` or `=` quoted, with `\"` for a quote in it). Several elements (the
 * certificates of several hops) are refused: which one is the client's is not for this
 * service to guess. Its `Subject` is then read as RFC 4514; its `Cert` is the URL-encoded PEM.
 */
export function xfccElement(
  header: string,
): { readonly pairs: ReadonlyMap<string, string> } | { readonly problem: string } {
  const elements: Map<string, string>[] = [];
  let pairs = new Map<string, string>();
  let i = 0;
  while (i < header.length) {
    const equals = header.indexOf('=', i);
    if (equals === -1) return { problem: 'an x-forwarded-client-cert pair without "="' };
    const key = header.slice(i, equals).trim().toLowerCase();
    i = equals + 1;
    let value = '';
    if (header[i] === '"') {
      i += 1;
      for (;;) {
        if (i >= header.length) return { problem: 'an unterminated quoted x-forwarded-client-cert value' };
        if (header[i] === '\\' && header[i + 1] === '"') {
          value += '"';
          i += 2;
        } else if (header[i] === '"') {
          i += 1;
          break;
        } else {
          value += header[i];
          i += 1;
        }
      }
      if (i < header.length && header[i] !== ';' && header[i] !== ',') {
        return { problem: 'text after a quoted x-forwarded-client-cert value' };
      }
    } else {
      while (i < header.length && header[i] !== ';' && header[i] !== ',') value += header[i++];
    }
    if (pairs.has(key)) return { problem: `x-forwarded-client-cert names ${key} twice` };
    pairs.set(key, value);
    if (header[i] === ',') {
      elements.push(pairs);
      pairs = new Map();
    }
    i += 1;
  }
  elements.push(pairs);
  if (elements.length !== 1) return { problem: 'x-forwarded-client-cert holds more than one certificate' };
  return { pairs };
}
