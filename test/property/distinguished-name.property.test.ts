import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import {
  type Attribute,
  commonNameIn,
  parseLegacy,
  parseRfc4514,
  type Rdn,
  subjectCommonName,
  xfccElement,
} from '../../src/adapters/http/distinguished-name.js';
import { anyText, hostile } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * The certificate's distinguished name as a gateway states it (src/adapters/http/distinguished-name.ts):
 * RFC 4514 and OpenSSL's legacy form in `subject-distinguished-name`, and Envoy's
 * `x-forwarded-client-cert`. The writers here are written from the RFC and the gateways'
 * documentation, not from the parser.
 */

const TYPES = [
  'CN',
  'O',
  'OU',
  'C',
  'L',
  'ST',
  'DC',
  'UID',
  'SERIALNUMBER',
  '2.5.4.97',
  '1.2.840.113549.1.9.1',
];

/** A value: any Unicode scalar values (no lone surrogates: a certificate's strings are UTF-8), the specials often. */
const value = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(' ', '#', ',', '+', '\\', '"', '=', ';', '\ufeff', '\u0000', 'é'),
    },
  ),
  maxLength: 24,
});
const attribute = (type: fc.Arbitrary<string>): fc.Arbitrary<Attribute> => fc.record({ type, value });
const rdn = fc.array(attribute(fc.constantFrom(...TYPES)), { minLength: 1, maxLength: 3 });

/** RFC 4514 §2.4: a value escaped as the RFC asks (controls and DEL as hex bytes, specials with `\`). */
function escapeValue(text: string, hexForAll: boolean): string {
  const chars = [...text];
  return chars
    .map((ch, i) => {
      const code = ch.codePointAt(0) as number;
      if (code < 0x20 || code === 0x7f || (hexForAll && code > 0x7f)) {
        return [...Buffer.from(ch, 'utf8')].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
      }
      if (',+"\\<>;='.includes(ch)) return `\\${ch}`;
      if ((ch === '#' && i === 0) || (ch === ' ' && (i === 0 || i === chars.length - 1))) return `\\${ch}`;
      return ch;
    })
    .join('');
}

/** RFC 4514 §2.1: the RDNs joined with `,`, a multi-valued RDN's attributes with `+`. */
function rfc4514(rdns: readonly Rdn[], hexForAll: boolean, space: boolean): string {
  return rdns
    .map((r) => r.map((a) => `${a.type}=${escapeValue(a.value, hexForAll)}`).join('+'))
    .join(space ? ', ' : ',');
}

const rdnsWithCn = fc
  .tuple(fc.array(rdn, { maxLength: 3 }), printableCn(), fc.array(rdn, { maxLength: 2 }))
  .map(([before, cn, after]) => ({
    rdns: [...before, [{ type: 'CN', value: cn }], ...after].map((r) =>
      r.map((a) => (a.type === 'CN' && a.value !== cn ? { ...a, type: 'O' } : a)),
    ),
    cn,
  }));

function printableCn(): fc.Arbitrary<string> {
  return fc.string({ unit: 'binary', minLength: 1, maxLength: 24 });
}

describe('RFC 4514 distinguished names', () => {
  test.prop([fc.array(rdn, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean()], runs(1000))(
    'a name written as RFC 4514 reads back as its RDNs, escapes as characters or as UTF-8 bytes',
    (rdns, hexForAll, space) => {
      const read = parseRfc4514(rfc4514(rdns, hexForAll, space));
      expect(read).toEqual({ rdns });
    },
    TIMEOUT,
  );

  test.prop([rdnsWithCn, fc.boolean()], runs(500))(
    'the one CN of a name is the CN read, wherever its RDN stands',
    ({ rdns, cn }, hexForAll) => {
      expect(subjectCommonName(rfc4514(rdns, hexForAll, false))).toEqual({ commonName: cn });
    },
    TIMEOUT,
  );

  const written = fc
    .tuple(fc.array(rdn, { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([rdns, hex]) => rfc4514(rdns, hex, false));
  test.prop([hostile(written, 120)], runs(2000))(
    'any text: RDNs or a problem, never a throw; what reads, written again, reads the same',
    (text) => {
      const read = parseRfc4514(text);
      if ('problem' in read) {
        expect(read.problem).toMatch(/\S/);
        return;
      }
      expect(parseRfc4514(rfc4514(read.rdns, false, false))).toEqual(read);
      // Every value read is whole UTF-8, so a certificate could hold it.
      for (const a of read.rdns.flat()) expect(a.value).toBe(Buffer.from(a.value, 'utf8').toString('utf8'));
    },
    TIMEOUT,
  );
});

describe('the OpenSSL legacy form', () => {
  const LEGACY = ['C', 'O', 'OU', 'L', 'ST', 'DC', 'UID', 'CN', 'emailAddress', 'serialNumber'];
  const plain = fc.string({
    unit: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((ch) => !/[/+\\\p{Cc}]/u.test(ch)),
    maxLength: 16,
  });
  test.prop(
    [fc.array(fc.record({ type: fc.constantFrom(...LEGACY), value: plain }), { maxLength: 4 }), plain],
    runs(1000),
  )(
    'a name whose values hold no / + or \\ reads back, its CN last',
    (before, cn) => {
      const others = before.filter((a) => a.type !== 'CN');
      const text = `${others.map((a) => `/${a.type}=${a.value}`).join('')}/CN=${cn}`;
      const read = parseLegacy(text);
      expect(read).toEqual({
        rdns: [
          ...others.map((a) => [{ type: a.type.toUpperCase(), value: a.value }]),
          [{ type: 'CN', value: cn }],
        ],
      });
      expect(commonNameIn(read)).toEqual(cn === '' ? { problem: 'an empty CN' } : { commonName: cn });
    },
    TIMEOUT,
  );

  // The legacy form escapes nothing: a "/" or "+" in a value cannot be told from a separator.
  // Whatever the values hold, the CN read is the certificate's own, or none.
  const piece = fc.string({ unit: fc.constantFrom('/', '+', '=', 'CN', 'O', 'a', ' ', 'é'), maxLength: 8 });
  /** A value, often one that looks like more segments: `a/O=b`, `x+CN=y`. */
  const anyValue = fc.oneof(
    piece,
    fc
      .tuple(piece, fc.constantFrom('/', '+'), fc.constantFrom(...LEGACY), piece)
      .map(([a, sep, type, b]) => `${a}${sep}${type}=${b}`),
  );
  test.prop(
    [fc.array(fc.record({ type: fc.constantFrom(...LEGACY), value: anyValue }), { maxLength: 3 }), anyValue],
    runs(2000),
  )(
    'values holding / + = never make another CN read: the true one, or a problem',
    (before, cn) => {
      const others = before.filter((a) => a.type !== 'CN');
      const text = `${others.map((a) => `/${a.type}=${a.value}`).join('')}/CN=${cn}`;
      const read = subjectCommonName(text);
      if ('commonName' in read) expect(read.commonName).toBe(cn);
    },
    TIMEOUT,
  );

  test.prop([hostile(fc.constant('/C=GB/O=Example/CN=client-a'), 120)], runs(1000))(
    'any text: RDNs or a problem, never a throw',
    (text) => {
      const read = parseLegacy(text);
      expect('rdns' in read || read.problem.length > 0).toBe(true);
      expect(() => subjectCommonName(text)).not.toThrow();
    },
    TIMEOUT,
  );
});

describe("Envoy's x-forwarded-client-cert", () => {
  const KEYS = ['by', 'hash', 'cert', 'chain', 'subject', 'uri', 'dns'];
  /** A value Envoy writes: quoted when it holds `,` `;` `=` or `"`, a quote in it as `\"`. */
  const xfccValue = fc
    .string({
      unit: fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        fc.constantFrom(',', ';', '=', '"', ' ', 'CN', 'x'),
      ),
      maxLength: 30,
    })
    .filter((v) => !v.includes('\\') && v.trim() === v);
  const quote = (v: string) => (/[,;="]/.test(v) ? `"${v.replaceAll('"', '\\"')}"` : v);
  const element = fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), xfccValue), {
    minLength: 1,
    maxLength: 5,
    selector: ([key]) => key,
  });

  test.prop([element, fc.boolean()], runs(1000))(
    'one element written as Envoy writes it reads back as its pairs, keys in any case',
    (pairs, upper) => {
      const header = pairs.map(([k, v]) => `${upper ? k.toUpperCase() : k}=${quote(v)}`).join(';');
      const read = xfccElement(header);
      expect(read).toEqual({ pairs: new Map(pairs) });
    },
    TIMEOUT,
  );

  test.prop([element, element], runs(500))(
    'two elements (two hops) are refused, whatever they hold',
    (a, b) => {
      const write = (pairs: typeof a) => pairs.map(([k, v]) => `${k}=${quote(v)}`).join(';');
      expect(xfccElement(`${write(a)},${write(b)}`)).toEqual({
        problem: 'x-forwarded-client-cert holds more than one certificate',
      });
    },
    TIMEOUT,
  );

  test.prop([anyText(200)], runs(1000))(
    'any text: pairs or a problem, never a throw',
    (header) => {
      const read = xfccElement(header);
      expect('pairs' in read || read.problem.length > 0).toBe(true);
    },
    TIMEOUT,
  );
});
