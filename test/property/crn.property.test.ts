import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { CRN_MAX_LENGTH, Crn, CrnFormat } from '../../src/domain/crn.js';
import { InvalidCrnError } from '../../src/domain/errors.js';
import { anyText, hostile } from './arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * The crn, as it arrives in a path (src/domain/crn.ts): Crn.parse on anything, and the
 * configured pattern (`CRN_PATTERN`) an operator writes.
 */

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const letter = fc.constantFrom(...LETTERS);
const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 6, maxLength: 6 });
const validCrn = fc.tuple(letter, digits).map(([l, d]) => l + d);

/** The default shape, written without a regular expression: one capital letter, six digits. */
const isDefaultShape = (text: string): boolean =>
  text.length === 7 &&
  LETTERS.includes(text[0] as string) &&
  [...text.slice(1)].every((ch) => ch >= '0' && ch <= '9');

describe('the crn', () => {
  test.prop([validCrn], runs(500))(
    'a crn of the default shape reads back as itself, in JSON too',
    (raw) => {
      const crn = Crn.parse(raw);
      expect(crn.toString()).toBe(raw);
      expect(JSON.stringify({ crn })).toBe(JSON.stringify({ crn: raw }));
      expect(crn.equals(Crn.parse(raw))).toBe(true);
    },
    TIMEOUT,
  );

  test.prop([hostile(validCrn, 40)], runs(2000))(
    'anything else is refused with InvalidCrnError alone, exactly when it is not of the shape',
    (raw) => {
      let parsed: Crn | undefined;
      try {
        parsed = Crn.parse(raw);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidCrnError);
      }
      expect(parsed !== undefined).toBe(isDefaultShape(raw));
      if (parsed !== undefined) expect(parsed.value).toBe(raw);
    },
    TIMEOUT,
  );

  test.prop([anyText(60)], runs(1000))(
    'any text as a pattern: a format, or an Error naming the pattern; a format never accepts empty or overlong crns',
    (pattern) => {
      let format: CrnFormat | undefined;
      try {
        format = CrnFormat.of(pattern);
      } catch (error) {
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(/^crn pattern /);
      }
      if (format === undefined) return;
      expect(format.accepts('')).toBe(false);
      expect(format.accepts('A'.repeat(CRN_MAX_LENGTH + 1))).toBe(false);
    },
    TIMEOUT,
  );

  // A pattern "anchored at both ends" must describe the whole value: `^A\d{6}|B\d{6}$` is
  // written as two anchored alternatives, and must not accept `B123456` after anything.
  const atom = fc.constantFrom('[A-Z][0-9]{6}', 'X[0-9]{3}', '[a-z]+', '[0-9]{2}', 'AB', 'Q.');
  const alternatives = fc.array(atom, { minLength: 1, maxLength: 3 });
  test.prop(
    [alternatives, fc.string({ unit: fc.constantFrom(...'ABQXabz0123456789/.-'), maxLength: 12 })],
    runs(1000),
  )(
    'a configured pattern is matched against the whole crn, whatever alternatives it holds',
    (atoms, raw) => {
      const pattern = `^${atoms.join('|')}$`;
      const whole = atoms.map((a) => new RegExp(`^(?:${a})$`));
      expect(CrnFormat.of(pattern).accepts(raw)).toBe(raw.length > 0 && whole.some((re) => re.test(raw)));
    },
    TIMEOUT,
  );
});
