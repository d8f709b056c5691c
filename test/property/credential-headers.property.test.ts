import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { bearerTokenOf } from '../../src/adapters/http/perimeter.js';
import { formatApiKey, parseApiKey } from '../../src/domain/access/api-key.js';
import { CertificateSerial } from '../../src/domain/access/certificate-serial.js';
import { UnauthenticatedError } from '../../src/domain/errors.js';
import { hostile } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * The credentials a request carries in its headers: the API key (`x-api-key`,
 * src/domain/access/api-key.ts), the bearer token (`Authorization`, bearerTokenOf in
 * src/adapters/http/perimeter.ts) and the serial a gateway states (`cert-serial-number`,
 * src/domain/access/certificate-serial.ts).
 */

const chars = (alphabet: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength, maxLength });
const keyId = chars('abcdefghijklmnopqrstuvwxyz0123456789', 16, 16);
const keySecret = chars('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-', 43, 86);
const apiKey = fc.tuple(keyId, keySecret).map(([id, secret]) => `crs_${id}_${secret}`);

describe('the API key', () => {
  test.prop([keyId, keySecret], runs(500))(
    'a key written by formatApiKey reads back as its id and secret',
    (id, secret) => {
      expect(parseApiKey(formatApiKey(id, secret))).toEqual({ id, secret });
    },
    TIMEOUT,
  );

  test.prop([hostile(apiKey, 140)], runs(2000))(
    'any text: a key exactly when it is of the shape, read whole (written again it is the text)',
    (raw) => {
      const parsed = parseApiKey(raw);
      expect(parsed !== undefined).toBe(/^crs_[a-z0-9]{16}_[A-Za-z0-9_-]{43,86}$/.test(raw));
      if (parsed !== undefined) expect(formatApiKey(parsed.id, parsed.secret)).toBe(raw);
    },
    TIMEOUT,
  );
});

/** RFC 6750 §2.1's b64token (RFC 7235's token68). */
const token68 = fc
  .tuple(chars('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/', 1, 80), fc.nat(3))
  .map(([body, pad]) => body + '='.repeat(pad));
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

describe('the bearer header', () => {
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR');
  test.prop(
    [scheme, fc.integer({ min: 1, max: 3 }), token68, fc.constantFrom('', ' ', '\t', '  ')],
    runs(1000),
  )(
    'Bearer, in any case, spaces and a token68 give the token',
    (name, spaces, token, trailing) => {
      expect(bearerTokenOf(`${name}${' '.repeat(spaces)}${token}${trailing}`)).toBe(token);
    },
    TIMEOUT,
  );

  test.prop([token68], runs(500))(
    'the fast path for a held token (the header after "Bearer ") is the token bearerTokenOf reads',
    (token) => {
      const header = `Bearer ${token}`;
      expect(bearerTokenOf(header)).toBe(header.slice('Bearer '.length));
    },
    TIMEOUT,
  );

  test.prop(
    [
      hostile(
        token68.map((t) => `Bearer ${t}`),
        120,
      ),
    ],
    runs(2000),
  )(
    'any text: a token68 found in the header, or UnauthenticatedError alone',
    (header) => {
      let token: string | undefined;
      try {
        token = bearerTokenOf(header);
      } catch (error) {
        expect(error).toBeInstanceOf(UnauthenticatedError);
        return;
      }
      expect(token).toMatch(TOKEN68);
      // The whole header is read: the scheme, spaces, the token, white space at most after it.
      expect(header.replace(/^bearer +/i, '').trimEnd()).toBe(token);
    },
    TIMEOUT,
  );
});

describe('the serial a gateway states', () => {
  const hexDigits = chars('0123456789abcdefABCDEF', 1, 40);
  test.prop([hexDigits, fc.boolean(), fc.nat(3)], runs(1000))(
    'hex digits in either case, with colons between bytes and leading zeros, read as their value',
    (digits, colons, zeros) => {
      const padded = '0'.repeat(zeros) + digits;
      const written = colons ? (padded.match(/.{1,2}/g) ?? []).join(':') : padded;
      const value = BigInt(`0x${padded}`).toString(16).toUpperCase();
      expect(CertificateSerial.tryParse(written)).toBe(value);
    },
    TIMEOUT,
  );

  test.prop([hostile(fc.constant('4f:1a:09'), 80)], runs(2000))(
    'any text: a serial only when it holds hex digits and colons alone, in the one spelling of its value',
    (raw) => {
      const serial = CertificateSerial.tryParse(raw);
      if (serial === undefined) return;
      // Nothing but hex digits is read as one ('ﬀ' upper-cased is 'FF'): colons and white space aside.
      expect(raw.replace(/[:\s]/g, '')).toMatch(/^[0-9A-Fa-f]+$/);
      expect(serial).toBe(
        BigInt(`0x${raw.replaceAll(':', '').trim()}`)
          .toString(16)
          .toUpperCase(),
      );
      expect(CertificateSerial.tryParse(serial)).toBe(serial);
    },
    TIMEOUT,
  );
});
