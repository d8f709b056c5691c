import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { formatTlogProof, parseTlogProof, type TlogProof } from '../../src/tlog/tlog-proof.js';
import { anyText, hostile, sameModuloBase64 } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * C2SP tlog-proof@v1 files (src/tlog/tlog-proof.ts), as `audit verify-proof` reads one an
 * auditor was handed.
 */

const hash = fc.uint8Array({ minLength: 32, maxLength: 32 });
/** A checkpoint note as the file carries it, verbatim: any text that starts with a line of its own. */
const checkpoint = fc
  .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }), anyText(120))
  .filter(([first]) => !first.startsWith('\n'))
  .map(([first, rest]) => first + rest);
/** `extra`: opaque base64, as the format says. */
const extra = fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64'));
const proof: fc.Arbitrary<TlogProof> = fc
  .record({
    index: fc.oneof(fc.nat(1000), fc.maxSafeNat()),
    hashes: fc.array(hash, { maxLength: 64 }),
    checkpoint,
    extra: fc.option(extra, { nil: undefined }),
  })
  .map(({ extra: e, ...rest }) => (e === undefined ? rest : { ...rest, extra: e }));

describe('tlog-proof files', () => {
  test.prop([proof], runs(200))(
    'a proof written reads back as its index, hashes, checkpoint and extra',
    (p) => {
      expect(parseTlogProof(formatTlogProof(p))).toEqual(p);
    },
    TIMEOUT,
  );

  test.prop([proof, anyText(40)], runs(500))(
    'formatTlogProof writes what reads back, or refuses: an extra of any text',
    (p, e) => {
      let text: string;
      try {
        text = formatTlogProof({ ...p, extra: e });
      } catch (error) {
        expect(error).toBeInstanceOf(Error);
        return;
      }
      expect(parseTlogProof(text)).toEqual({ ...p, extra: e });
    },
    TIMEOUT,
  );

  test.prop([hostile(proof.map(formatTlogProof), 400)], runs(1000))(
    'any text: a proof or a reason naming a line, never a throw; a proof read, written again, is the text',
    (text) => {
      const read = parseTlogProof(text);
      if ('invalid' in read) {
        expect(read.invalid).toMatch(/\S/);
        return;
      }
      expect(Number.isSafeInteger(read.index) && read.index >= 0).toBe(true);
      expect(read.hashes.every((h) => h.length === 32)).toBe(true);
      expect(parseTlogProof(formatTlogProof(read))).toEqual(read);
      expect(sameModuloBase64(formatTlogProof(read), text)).toBe(true);
    },
    TIMEOUT,
  );
});
