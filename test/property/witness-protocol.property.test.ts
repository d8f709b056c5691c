import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { cosignatureLine } from '../../src/tlog/cosignature.js';
import {
  addCheckpointBody,
  MAX_PROOF_LINES,
  parseAddCheckpointBody,
  parseCosignatureLines,
  parseTlogSize,
  tlogSizeBody,
  WitnessProtocolError,
} from '../../src/tlog/witness-protocol.js';
import { anyText, hostile, sameModuloBase64 } from './arbitraries.js';
import { keyName, testNoteKey, wellFormedNoteText } from './note-arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * C2SP tlog-witness bodies as they arrive (src/tlog/witness-protocol.ts): the add-checkpoint
 * request at the witness, and the 200's cosignature lines and the 409's size at the log.
 */

const size = fc.oneof(fc.nat(1000), fc.maxSafeNat());
const hash = fc.uint8Array({ minLength: 32, maxLength: 32 });
/** A signed note as a log sends one: any text ending in a newline. */
const note = fc.tuple(anyText(150), fc.constantFrom('\n', '\n\n— x AAAA\n')).map(([t, end]) => t + end);
const request = fc.record({ old: size, proof: fc.array(hash, { maxLength: MAX_PROOF_LINES }), note });

describe('the add-checkpoint request body', () => {
  test.prop([request], runs(200))(
    'a body written by addCheckpointBody reads back as its old size, proof and note, or is refused as it is written',
    ({ old, proof, note: n }) => {
      let body: string;
      try {
        body = addCheckpointBody(old, proof, n);
      } catch (error) {
        expect(error).toBeInstanceOf(WitnessProtocolError);
        return;
      }
      expect(parseAddCheckpointBody(body)).toEqual({ old, proof, note: n });
    },
    TIMEOUT,
  );

  test.prop([anyText(100)], runs(500))(
    'a note of any text: addCheckpointBody refuses it or writes a body that reads back',
    (text) => {
      let body: string;
      try {
        body = addCheckpointBody(0, [], text);
      } catch (error) {
        expect(error).toBeInstanceOf(WitnessProtocolError);
        return;
      }
      expect(parseAddCheckpointBody(body)).toEqual({ old: 0, proof: [], note: text });
    },
    TIMEOUT,
  );

  test.prop(
    [
      hostile(
        request.map((r) => addCheckpointBody(r.old, r.proof, `o\n${r.note}`)),
        400,
      ),
    ],
    runs(1500),
  )(
    'any text: a request or a reason, never a throw; a request read, written again, is the text',
    (text) => {
      const read = parseAddCheckpointBody(text);
      if ('invalid' in read) {
        expect(read.invalid).toMatch(/\S/);
        return;
      }
      expect(read.proof.length).toBeLessThanOrEqual(MAX_PROOF_LINES);
      const again = addCheckpointBody(read.old, read.proof, read.note);
      expect(parseAddCheckpointBody(again)).toEqual(read);
      expect(sameModuloBase64(again, text)).toBe(true);
    },
    TIMEOUT,
  );
});

describe("the 409's size", () => {
  test.prop([size], runs(500))(
    'a size written reads back',
    (n) => {
      expect(parseTlogSize(tlogSizeBody(n))).toBe(n);
    },
    TIMEOUT,
  );

  test.prop([hostile(size.map(tlogSizeBody), 30)], runs(1500))(
    'any text: a size only when it is the one spelling of that size',
    (text) => {
      const n = parseTlogSize(text);
      if (n !== undefined) expect(tlogSizeBody(n)).toBe(text);
    },
    TIMEOUT,
  );
});

describe("the 200's cosignature lines", () => {
  const cosigner = testNoteKey('witness.example/w1', 0x04);
  const lines = fc
    .tuple(wellFormedNoteText, fc.array(fc.tuple(keyName, fc.maxSafeNat()), { minLength: 1, maxLength: 4 }))
    .map(([text, signers]) =>
      signers.map(([name, time]) => cosignatureLine({ ...cosigner, name }, text, time).slice(0, -1)),
    );

  test.prop([lines], runs(300))(
    'cosignature lines written read back as the lines',
    (written) => {
      expect(parseCosignatureLines(written.map((l) => `${l}\n`).join(''))).toEqual(written);
    },
    TIMEOUT,
  );

  test.prop(
    [
      hostile(
        lines.map((ls) => ls.map((l) => `${l}\n`).join('')),
        400,
      ),
    ],
    runs(1000),
  )(
    'any text: lines or a reason, never a throw; the lines read are the body, line by line',
    (body) => {
      const read = parseCosignatureLines(body);
      if ('invalid' in read) {
        expect(read.invalid).toMatch(/\S/);
        return;
      }
      expect(read.map((l) => `${l}\n`).join('')).toBe(body);
      expect(read.every((l) => l.startsWith('— '))).toBe(true);
    },
    TIMEOUT,
  );
});
