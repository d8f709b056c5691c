import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect } from 'vitest';
import { derOfEstBody, MAX_BODY } from '../../src/adapters/http/est.handlers.js';
import { x509CertificateRequests } from '../../src/adapters/x509/certificate-requests.js';
import { CertificateRequestError, MAX_CSR_BYTES } from '../../src/ports/certificate-requests.js';
import { anyText, hostileBytes } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * Consumers' CSRs as they arrive (src/adapters/x509/certificate-requests.ts), from `certs sign`
 * (PEM or DER) and from EST `simplereenroll` (src/adapters/http/est.handlers.ts: base64 with any
 * line breaks, RFC 7030 §4.2.1).
 */

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
let keys: webcrypto.CryptoKeyPair;
let good: Uint8Array;
beforeAll(async () => {
  keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  good = await csrFor('consumer-a');
});

/** The good CSR, once beforeAll has made it (an arbitrary is built before the hooks run). */
const goodCsr = fc.constant(null).map(() => good);

/** A CSR, DER, whose subject is one RDN holding one CN, `cn` (any Unicode), signed by the shared key. */
async function csrFor(cn: string): Promise<Uint8Array> {
  const request = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [cn] }],
    keys: keys as never,
    signingAlgorithm: EC,
  });
  return new Uint8Array(request.rawData);
}

/** `der` as an EST client sends it: base64 in lines of `width`, ended by `eol`. */
function estBody(der: Uint8Array, width: number, eol: string): Uint8Array {
  const text = Buffer.from(der).toString('base64');
  const lines = text.match(new RegExp(`.{1,${width}}`, 'g')) ?? [];
  return new Uint8Array(Buffer.from(lines.join(eol) + eol, 'latin1'));
}

/** Reads `request`, giving the refusal's problem, or the CSR read; anything else thrown fails the test. */
async function outcome(request: Uint8Array | string) {
  try {
    return await x509CertificateRequests.read(request);
  } catch (error) {
    if (error instanceof CertificateRequestError) return error.problem;
    throw error;
  }
}

describe('CSRs', () => {
  // Without `\`, `"` and a leading `#`: @peculiar/x509's generator reads those in a JSON name
  // as escapes, a quoted part and hex (the reader under test reads the DER as it is).
  const cn = fc
    .string({
      unit: fc.oneof(
        { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
        { weight: 1, arbitrary: fc.constantFrom(' ', '\t', ',', '+', '=', ';', '#', '\ufeff', '\u0000') },
      ),
      minLength: 1,
      maxLength: 64,
    })
    .filter((name) => !/[\\"]/.test(name) && !name.startsWith('#'));
  test.prop([cn], runs(60))(
    'a CSR for any CN reads back with that CN, its key kind and its bytes; as PEM too',
    async (name) => {
      const der = await csrFor(name);
      const read = await x509CertificateRequests.read(der);
      expect(read).toMatchObject({ commonName: name, keyKind: 'EC P-256' });
      expect(Buffer.from(read.der).equals(Buffer.from(der))).toBe(true);
      const pem = x509.PemConverter.encode(der.buffer as ArrayBuffer, 'CERTIFICATE REQUEST');
      expect((await x509CertificateRequests.read(pem)).commonName).toBe(name);
    },
    TIMEOUT,
  );

  test.prop([hostileBytes(goodCsr, 1200)], runs(1500))(
    'any bytes, a CSR with bytes changed or cut included: read, or refused with a CertificateRequestError alone; what reads is the CSR signed',
    async (bytes) => {
      const read = await outcome(bytes);
      if (typeof read === 'string') return;
      // What reads was signed by the key, its subject untouched.
      expect(read.commonName).toBe('consumer-a');
    },
    TIMEOUT,
  );

  test.prop([anyText(300)], runs(300))(
    'any text as PEM: refused with a CertificateRequestError alone',
    async (text) => {
      const read = await outcome(
        `-----BEGIN CERTIFICATE REQUEST-----\n${text}\n-----END CERTIFICATE REQUEST-----\n`,
      );
      expect(typeof read).toBe('string');
      expect(typeof (await outcome(text))).toBe('string');
    },
    TIMEOUT,
  );
});

describe('EST bodies', () => {
  const width = fc.oneof(fc.constantFrom(64, 76), fc.integer({ min: 4, max: 200 }));
  const eol = fc.constantFrom('\n', '\r\n');
  test.prop([fc.uint8Array({ minLength: 1, maxLength: 2048 }), width, eol], runs(500))(
    'DER written as base64 in lines of any width, LF or CRLF, reads back as the DER',
    (der, w, e) => {
      expect(Buffer.from(derOfEstBody(estBody(der, w, e))).equals(Buffer.from(der))).toBe(true);
    },
    TIMEOUT,
  );

  test.prop(
    [fc.integer({ min: MAX_CSR_BYTES - 64, max: MAX_CSR_BYTES }), fc.constantFrom(64, 76), eol],
    runs(50),
  )(
    'a CSR of the largest size allowed, in PEM’s or MIME’s lines with either line end, is within the body limit',
    (size, w, e) => {
      expect(estBody(new Uint8Array(size), w, e).length).toBeLessThanOrEqual(MAX_BODY);
    },
    TIMEOUT,
  );

  const body = fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 300 }), width, eol)
    .map(([der, w, e]) => estBody(der, w, e));
  test.prop([hostileBytes(body, 600)], runs(1000))(
    'any body: DER, or a CertificateRequestError alone; what is read is the body’s one base64 reading',
    (bytes) => {
      let der: Uint8Array;
      try {
        der = derOfEstBody(bytes);
      } catch (error) {
        expect(error).toBeInstanceOf(CertificateRequestError);
        return;
      }
      // Written again, it is the body without its white space: nothing dropped, nothing added.
      const text = Buffer.from(bytes)
        .toString('latin1')
        .replace(/[ \t\r\n]+/g, '');
      expect(Buffer.from(der).toString('base64')).toBe(text);
    },
    TIMEOUT,
  );

  test.prop(
    [
      hostileBytes(
        goodCsr.map((der) => estBody(der, 64, '\r\n')),
        1500,
      ),
    ],
    runs(300),
  )(
    'any body through to the CSR read: a CertificateRequestError alone, or the CSR signed',
    async (bytes) => {
      let der: Uint8Array;
      try {
        der = derOfEstBody(bytes);
      } catch (error) {
        expect(error).toBeInstanceOf(CertificateRequestError);
        return;
      }
      const read = await outcome(der);
      if (typeof read !== 'string') expect(read.commonName).toBe('consumer-a');
    },
    TIMEOUT,
  );
});
