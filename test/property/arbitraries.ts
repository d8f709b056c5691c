import fc from 'fast-check';

/**
 * Inputs the parsers under test/property are given: arbitrary text as it arrives from outside,
 * and near misses made from valid input by a few edits (where parsers go wrong far more often
 * than on noise).
 */

/** Characters that mean something to some format here, or that parsers commonly mishandle. */
const TRICKY = [
  '\n',
  '\r',
  '\t',
  '\0',
  ' ',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '\ud800',
  '\udc00',
  '—',
  '+',
  '/',
  '\\',
  '"',
  ',',
  ';',
  '=',
  '#',
  '%',
  '@',
  ':',
  '?',
  '&',
  '[',
  ']',
  '0',
  'A',
  'z',
  'é',
  'ﬀ',
  '🐈',
] as const;

/** One character: mostly printable ASCII, often a tricky one, sometimes any code point or a lone surrogate. */
export const anyChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 2, arbitrary: fc.constantFrom(...'0123456789abcdefABCDEF') },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);

/** Arbitrary text: any code points, lone surrogates and the tricky characters among them. */
export const anyText = (maxLength = 200): fc.Arbitrary<string> =>
  fc.array(anyChar, { maxLength }).map((chars) => chars.join(''));

/**
 * One edit of a string: a character inserted, removed or replaced, or its case changed; or, for
 * the line formats, a line repeated, dropped, joined to the next, or an empty one inserted.
 */
type Edit = {
  /** Where: counted from the start or from the end (where formats keep their headers and ends), or anywhere. */
  readonly from: 'start' | 'end' | 'anywhere';
  readonly at: number;
  readonly kind:
    | 'insert'
    | 'delete'
    | 'replace'
    | 'case'
    | 'zero-pad'
    | 'repeat-line'
    | 'drop-line'
    | 'join-line'
    | 'empty-line';
  readonly char: string;
};

const edit: fc.Arbitrary<Edit> = fc.record({
  from: fc.constantFrom('start', 'end', 'anywhere'),
  at: fc.nat(),
  kind: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('insert', 'delete', 'replace', 'case') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('repeat-line', 'drop-line', 'join-line', 'empty-line'),
    },
    { weight: 1, arbitrary: fc.constant('zero-pad' as const) },
  ),
  char: anyChar,
});

/** A position in `0..span-1`, near the start or the end, or anywhere. */
function position(span: number, from: Edit['from'], at: number, window: number): number {
  if (span <= 0) return 0;
  if (from === 'start') return Math.min(at % window, span - 1);
  if (from === 'end') return Math.max(0, span - 1 - (at % window));
  return at % span;
}

function applyEdit(text: string, { from, at, kind, char }: Edit): string {
  if (kind.endsWith('-line')) {
    const lines = text.split('\n');
    const j = position(lines.length, from, at, 4);
    const line = lines[j] as string;
    if (kind === 'repeat-line') lines.splice(j, 0, line);
    else if (kind === 'drop-line') lines.splice(j, 1);
    else if (kind === 'empty-line') lines.splice(j, 0, '');
    else if (j + 1 < lines.length) lines.splice(j, 2, line + (lines[j + 1] as string));
    return lines.join('\n');
  }
  if (kind === 'zero-pad') {
    // A leading zero on one of the numbers: another spelling of the same size or index.
    const runs = [...text.matchAll(/[0-9]+/g)];
    const run = runs[position(runs.length, from, at, 4)];
    return run?.index === undefined ? text : `${text.slice(0, run.index)}0${text.slice(run.index)}`;
  }
  const i = position(text.length + (kind === 'insert' ? 1 : 0), from, at, 64);
  if (kind === 'insert') return text.slice(0, i) + char + text.slice(i);
  if (kind === 'delete') return text.slice(0, i) + text.slice(i + 1);
  if (kind === 'case') {
    const ch = text.charAt(i);
    const other = ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase();
    return text.slice(0, i) + other + text.slice(i + 1);
  }
  return text.slice(0, i) + char + text.slice(i + 1);
}

/** `valid` changed by one to three edits: a near miss (sometimes, by chance, valid still). */
export const nearMiss = (valid: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc
    .tuple(valid, fc.array(edit, { minLength: 1, maxLength: 3 }))
    .map(([text, edits]) => edits.reduce(applyEdit, text));

/** Either arbitrary text or a near miss of `valid`. */
export const hostile = (valid: fc.Arbitrary<string>, maxLength = 200): fc.Arbitrary<string> =>
  fc.oneof(anyText(maxLength), nearMiss(valid));

/** ASN.1 tags a DER structure is made of: a near miss of DER often swaps one for another. */
const DER_TAGS = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x13, 0x16, 0x30, 0x31, 0xa0, 0xa3];

/** One edit of bytes: one replaced, the rest cut off, or (for DER) one of its tags changed for another. */
const byteEdit = fc.record({
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
  kind: fc.oneof(
    { weight: 3, arbitrary: fc.constant('replace' as const) },
    { weight: 1, arbitrary: fc.constant('cut' as const) },
    { weight: 2, arbitrary: fc.constant('retag' as const) },
  ),
});

/** Bytes from outside: any, or a near miss of `valid` (bytes changed, tags swapped, or cut short). */
export const hostileBytes = (valid: fc.Arbitrary<Uint8Array>, maxLength = 512): fc.Arbitrary<Uint8Array> =>
  fc.oneof(
    fc.uint8Array({ maxLength }),
    fc.tuple(valid, fc.array(byteEdit, { minLength: 1, maxLength: 4 })).map(([bytes, edits]) => {
      let out = Uint8Array.from(bytes);
      for (const { at, byte, kind } of edits) {
        if (out.length === 0) break;
        if (kind === 'retag') {
          const tags = [...out].flatMap((b, i) => (DER_TAGS.includes(b) ? [i] : []));
          const i = tags[at % Math.max(1, tags.length)];
          if (i !== undefined) out[i] = DER_TAGS[byte % DER_TAGS.length] as number;
          continue;
        }
        const i = at % out.length;
        if (kind === 'cut') out = out.slice(0, i);
        else out[i] = byte;
      }
      return out;
    }),
  );

/** Whether `error` is an instance of one of `kinds`: what a parser may throw as its own refusal. */
export const isOneOf = (error: unknown, ...kinds: readonly (abstract new (...args: never[]) => Error)[]) =>
  kinds.some((kind) => error instanceof kind);

/**
 * Whether `written` is `text` line for line, but for base64 lines that decode to the same bytes:
 * a parser's reading is exact (what it reads, written again, is what it was given) except that
 * it reads base64 as Go's decoder does, any unused low bits of the last character ignored.
 */
export function sameModuloBase64(written: string, text: string): boolean {
  const a = written.split('\n');
  const b = text.split('\n');
  const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
  return (
    a.length === b.length &&
    a.every((line, i) => {
      const other = b[i] as string;
      if (line === other) return true;
      return (
        BASE64.test(line) &&
        BASE64.test(other) &&
        line.length === other.length &&
        Buffer.from(line, 'base64').equals(Buffer.from(other, 'base64'))
      );
    })
  );
}
