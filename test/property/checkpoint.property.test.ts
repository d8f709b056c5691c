import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { verifyNoteSignature } from '../../src/adapters/crypto/note-keys.js';
import {
  type CheckpointBody,
  checkpointText,
  openCheckpointNote,
  parseCheckpointText,
  signNote,
} from '../../src/tlog/note.js';
import { hostile, sameModuloBase64 } from './arbitraries.js';
import { keyName, testNoteKey } from './note-arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * C2SP tlog-checkpoint texts (src/tlog/note.ts: checkpointText, parseCheckpointText,
 * openCheckpointNote): what a witness, an auditor or `audit verify` reads as a log's head.
 */

const size = fc.oneof(fc.nat(1000), fc.maxSafeNat());
const root = fc.uint8Array({ minLength: 32, maxLength: 32 });
/** An extension line: any text without a newline, not empty. */
const extension = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
  .filter((l) => !l.includes('\n'));
const body = fc.record({
  origin: keyName,
  size,
  root,
  extensions: fc.array(extension, { maxLength: 3 }),
});

/** The checkpoint text of `body`: its three lines and its extension lines. */
const written = (b: CheckpointBody): string =>
  checkpointText(b.origin, b.size, b.root) + b.extensions.map((line) => `${line}\n`).join('');

describe('checkpoint texts', () => {
  test.prop([body], runs(1000))(
    'a checkpoint written reads back as its origin, size, root and extension lines',
    (b) => {
      expect(parseCheckpointText(written(b))).toEqual(b);
    },
    TIMEOUT,
  );

  test.prop([hostile(body.map(written), 200)], runs(2000))(
    'any text: a body or a reason, never a throw; a body read, written again, is the text',
    (text) => {
      const read = parseCheckpointText(text);
      if ('invalid' in read) {
        expect(read.invalid).toMatch(/\S/);
        return;
      }
      expect(Number.isSafeInteger(read.size) && read.size >= 0).toBe(true);
      // C2SP tlog-checkpoint: every line is non-empty, extension lines too.
      expect(
        text
          .slice(0, -1)
          .split('\n')
          .every((line) => line.length > 0),
      ).toBe(true);
      expect(read.root).toHaveLength(32);
      expect(parseCheckpointText(written(read))).toEqual(read);
      // Read exactly: no other spelling of a size or an origin (the root's base64 as Go reads it).
      expect(sameModuloBase64(written(read), text)).toBe(true);
    },
    TIMEOUT,
  );

  test.prop([body.filter((b) => b.extensions.length === 0)], runs(200))(
    'a checkpoint signed by its log opens the one way, with its body',
    (b) => {
      const key = testNoteKey(b.origin);
      const note = signNote(written(b), key);
      expect(openCheckpointNote(note, [key], verifyNoteSignature)).toEqual({
        ok: true,
        body: b,
        verifiedBy: [expect.stringMatching(/^.+\+[0-9a-f]{8}$/)],
      });
    },
    TIMEOUT,
  );
});
