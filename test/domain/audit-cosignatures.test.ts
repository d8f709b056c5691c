import { describe, expect, it } from 'vitest';
import {
  type AuditCheckpoint,
  checkpointOf,
  isSignatureLine,
  MAX_COSIGNATURES,
  mergeCosignatures,
} from '../../src/domain/audit/checkpoint.js';
import { openNote, signNote } from '../../src/tlog/note.js';
import { cosignatureLine } from '../contract/audit-log.contract.js';

const checkpoint: AuditCheckpoint = {
  seq: 3,
  head: 'a'.repeat(64),
  time: '2026-11-23T10:00:00.000Z',
  keyId: 'k1',
  signature: 'c2ln',
};
const line = cosignatureLine('w1.example', 1);
const base64 = line.slice('— w1.example '.length);

/** Lines a store might be handed or hold, each with whether it is a signature line. */
const lines: readonly [string, string, boolean][] = [
  ['a cosignature', line, true],
  ['a name with dots, slashes and non-ASCII letters', `— witness.example/é/1 ${base64}`, true],
  ['the shortest signature (5 bytes)', '— w AAAAAAA=', true],
  ['no dash', `w1.example ${base64}`, false],
  ['a hyphen for the dash', `- w1.example ${base64}`, false],
  ['no signature', '— w1.example', false],
  ['an empty name', `—  ${base64}`, false],
  ['a + in the name', `— w1+x ${base64}`, false],
  ['a no-break space in the name', `— w1\u00a0x ${base64}`, false],
  ['a newline at its end', `${line}\n`, false],
  ['a control character', `${line}\u0001`, false],
  ['U+FFFD', `— w1\ufffd ${base64}`, false],
  ['a lone surrogate', `— w1\ud800 ${base64}`, false],
  ['base64 without padding', `— w1.example ${base64.replace(/=+$/, '')}`, false],
  ['base64url', `— w1.example ${base64.replaceAll('/', '_').replaceAll('+', '-')}_`, false],
  ['4 bytes of signature', '— w1.example AAAAAA==', false],
  ['a second space', `— w1.example ${base64} x`, false],
  ['over 512 characters', `— ${'w'.repeat(500)} ${base64}`, false],
];

describe('cosignature lines', () => {
  it.each(lines)('%s', (_label, text, good) => {
    expect(isSignatureLine(text)).toBe(good);
  });

  it('takes every line a note opened as Go opens it takes, and no line it refuses', () => {
    const note = signNote('case-read.invalid/audit\n3\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n', {
      name: 'case-read.invalid/audit',
      keyId: 1,
      sign: () => new Uint8Array(64),
    });
    for (const [label, text, good] of lines) {
      if (text.includes('\n') || text.length > 512) continue;
      const opened = openNote(`${note}${text}\n`, [], () => false);
      // Well formed, it is refused for want of a key; malformed, as malformed.
      expect(opened.ok ? 'ok' : opened.why, label).toBe(good ? 'no-key' : 'malformed');
    }
  });

  it('a checkpoint reads its cosignatures back, none when absent, empty or null', () => {
    expect(checkpointOf({ ...checkpoint, cosignatures: [line] })).toEqual({
      ...checkpoint,
      cosignatures: [line],
    });
    for (const none of [undefined, null, []]) {
      const read = checkpointOf({ ...checkpoint, cosignatures: none });
      expect(read).toEqual(checkpoint);
      expect('cosignatures' in read).toBe(false);
    }
  });

  it.each<[string, unknown, RegExp]>([
    ['not a list', line, /not a list of signature lines/],
    ['a list holding a number', [line, 3], /cosignature 2 is not a signature line/],
    ['a line that is not one', [line, `${line}\n— w2 AAAAAAA=`], /cosignature 2 is not a signature line/],
    [
      `${MAX_COSIGNATURES + 1} lines`,
      Array.from({ length: MAX_COSIGNATURES + 1 }, (_, i) => cosignatureLine(`w${i}`, i)),
      /holds 100 lines, more than 99/,
    ],
  ])('a checkpoint whose cosignatures are %s is refused', (_label, cosignatures, why) => {
    const read = checkpointOf({ ...checkpoint, cosignatures });
    expect(read).toEqual({ invalid: expect.stringMatching(why) });
  });

  it('merges lines each once, those held first, and says which are new', () => {
    const [a, b, c] = [cosignatureLine('a', 1), cosignatureLine('b', 2), cosignatureLine('c', 3)];
    expect(mergeCosignatures(undefined, [b, a, b])).toEqual({ lines: [b, a], fresh: [b, a] });
    expect(mergeCosignatures([a, b], [c, a])).toEqual({ lines: [a, b, c], fresh: [c] });
    expect(mergeCosignatures([a, b], [b])).toEqual({ lines: [a, b], fresh: [] });
    expect(mergeCosignatures([a], [c, 'not a line'])).toEqual({
      invalid: '"not a line" is not a signature line "— NAME BASE64"',
    });
    const full = Array.from({ length: MAX_COSIGNATURES }, (_, i) => cosignatureLine(`w${i}`, i));
    expect(mergeCosignatures(full, [full[0] as string])).toMatchObject({ fresh: [] });
    expect(mergeCosignatures(full, [a])).toEqual({ invalid: 'it would hold 100 cosignatures, more than 99' });
  });
});
