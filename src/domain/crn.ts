import { InvalidCrnError } from './errors.js';

/** The default case reference number shape: one capital letter and six digits, e.g. `X123456`. */
export const DEFAULT_CRN_PATTERN = '^[A-Z][0-9]{6}$';

/**
 * No configured pattern may accept more than this many characters. The length is checked
 * before the pattern runs, so an operator-supplied pattern never sees a long input.
 */
export const CRN_MAX_LENGTH = 32;

/**
 * The configured crn pattern. The pattern must be anchored at both ends (`^...$`) so it
 * describes the whole value, and it must not accept the empty string. It is matched against
 * the whole crn whatever it holds: `^A[0-9]{6}|B[0-9]{6}$` reads as two alternatives of a whole
 * crn, not as an `A…` prefix or a `…B` suffix, which the regular expression alone would accept.
 */
export class CrnFormat {
  private readonly regex: RegExp;

  private constructor(readonly pattern: string) {
    // Checked as written first: a pattern that does not compile alone (an unbalanced `)`) must
    // not be given a meaning by the group wrapped around it.
    new RegExp(pattern);
    this.regex = new RegExp(`^(?:${pattern})$`);
  }

  static readonly default: CrnFormat = new CrnFormat(DEFAULT_CRN_PATTERN);

  /** Builds a format from a pattern string; throws `Error` naming what is wrong with it. */
  static of(pattern: string): CrnFormat {
    if (!pattern.startsWith('^') || !pattern.endsWith('$')) {
      throw new Error('crn pattern must be anchored: start with ^ and end with $');
    }
    let format: CrnFormat;
    try {
      format = new CrnFormat(pattern);
    } catch (error) {
      throw new Error(`crn pattern is not a valid regular expression: ${(error as Error).message}`);
    }
    if (format.regex.test('')) {
      throw new Error('crn pattern must not accept the empty string');
    }
    return format;
  }

  /** Why `raw` is not a crn of this format, or `undefined` when it is one. */
  problemWith(raw: string): string | undefined {
    if (raw.length === 0) return 'it is empty';
    if (raw.length > CRN_MAX_LENGTH) return `it is longer than ${CRN_MAX_LENGTH} characters`;
    if (!this.regex.test(raw)) return `it does not match the pattern ${this.pattern}`;
    return undefined;
  }

  accepts(raw: string): boolean {
    return this.problemWith(raw) === undefined;
  }
}

/**
 * A case reference number that has passed validation. The constructor is private and
 * {@link Crn.parse} validates, so a use case that takes a `Crn` cannot be handed an
 * unchecked string.
 */
export class Crn {
  private constructor(readonly value: string) {}

  /** Validates `raw` against `format` and returns a Crn, or throws {@link InvalidCrnError}. */
  static parse(raw: string, format: CrnFormat = CrnFormat.default): Crn {
    const problem = format.problemWith(raw);
    if (problem !== undefined) throw new InvalidCrnError(problem);
    return new Crn(raw);
  }

  equals(other: Crn): boolean {
    return this.value === other.value;
  }

  toString(): string {
    return this.value;
  }

  toJSON(): string {
    return this.value;
  }
}
