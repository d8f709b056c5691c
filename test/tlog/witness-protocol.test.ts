import { describe, expect, it } from 'vitest';
import {
  addCheckpointBody,
  MAX_PROOF_LINES,
  parseAddCheckpointBody,
  parseCosignatureLines,
  parseTlogSize,
  TLOG_SIZE_CONTENT_TYPE,
  tlogSizeBody,
  WitnessProtocolError,
} from '../../src/tlog/witness-protocol.js';

/** C2SP tlog-witness add-checkpoint bodies (src/tlog/witness-protocol.ts), against the spec's examples. */

// The spec's example request body (tlog-witness, add-checkpoint).
const exampleNote = [
  'example.com/behind-the-sofa',
  '20852163',
  'CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=',
  '',
  '— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=',
  '— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=',
  '',
].join('\n');
const exampleProof = [
  'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=',
  'jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=',
  '5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=',
  '/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=',
];
const exampleBody = `old 20852014\n${exampleProof.join('\n')}\n\n${exampleNote}`;

const hash = (byte: number) => new Uint8Array(32).fill(byte);

describe('the add-checkpoint request body', () => {
  it("reads the spec's example, and writes it back to the byte", () => {
    const body = parseAddCheckpointBody(exampleBody);
    if ('invalid' in body) throw new Error(body.invalid);
    expect(body.old).toBe(20852014);
    expect(body.proof.map((h) => Buffer.from(h).toString('base64'))).toEqual(exampleProof);
    expect(body.note).toBe(exampleNote);
    expect(addCheckpointBody(body.old, body.proof, body.note)).toBe(exampleBody);
  });

  it('round-trips an old size of zero with no proof, and the most proof lines allowed', () => {
    expect(addCheckpointBody(0, [], exampleNote)).toBe(`old 0\n\n${exampleNote}`);
    expect(parseAddCheckpointBody(`old 0\n\n${exampleNote}`)).toEqual({
      old: 0,
      proof: [],
      note: exampleNote,
    });
    const proof = Array.from({ length: MAX_PROOF_LINES }, (_, i) => hash(i));
    expect(parseAddCheckpointBody(addCheckpointBody(7, proof, exampleNote))).toEqual({
      old: 7,
      proof,
      note: exampleNote,
    });
  });

  it('refuses to write what the protocol cannot carry', () => {
    expect(() => addCheckpointBody(-1, [], exampleNote)).toThrow(WitnessProtocolError);
    expect(() => addCheckpointBody(1.5, [], exampleNote)).toThrow(WitnessProtocolError);
    expect(() =>
      addCheckpointBody(
        1,
        Array.from({ length: 64 }, () => hash(1)),
        exampleNote,
      ),
    ).toThrow(/64 hashes is more than 63/);
    expect(() => addCheckpointBody(1, [new Uint8Array(31)], exampleNote)).toThrow(WitnessProtocolError);
    expect(() => addCheckpointBody(1, [], exampleNote.slice(0, -1))).toThrow(WitnessProtocolError);
    // A note that begins with an empty line would be read as starting after it, and refused
    // (found by test/property/witness-protocol.property.test.ts).
    expect(() => addCheckpointBody(0, [], '\n')).toThrow('a checkpoint note begins with its origin line');
    expect(() => addCheckpointBody(0, [], `\n${exampleNote}`)).toThrow(WitnessProtocolError);
  });

  const proofLine = Buffer.from(hash(3)).toString('base64');
  it.each([
    ['no empty line', `old 1\n${proofLine}\n${exampleNote}`.replace('\n\n', '\n'), /no empty line/],
    ['an old size with a leading zero', `old 01\n\n${exampleNote}`, /not "old SIZE"/],
    ['an old size of 00', `old 00\n\n${exampleNote}`, /not "old SIZE"/],
    ['a negative old size', `old -1\n\n${exampleNote}`, /not "old SIZE"/],
    ['two spaces after old', `old  1\n\n${exampleNote}`, /not "old SIZE"/],
    ['a first line that is not old', `new 1\n\n${exampleNote}`, /not "old SIZE"/],
    ['an old size beyond 2^53', `old 9007199254740993\n\n${exampleNote}`, /not "old SIZE"/],
    ['64 proof lines', `old 1\n${`${proofLine}\n`.repeat(64)}\n${exampleNote}`, /64 lines, more than 63/],
    [
      'a proof line of 31 bytes',
      `old 1\n${Buffer.from(new Uint8Array(31)).toString('base64')}\n\n${exampleNote}`,
      /proof line 1 is not/,
    ],
    [
      'a proof line of 33 bytes',
      `old 1\n${proofLine}\n${Buffer.from(new Uint8Array(33)).toString('base64')}\n\n${exampleNote}`,
      /proof line 2 is not/,
    ],
    [
      'a proof line that is not base64',
      `old 1\n${proofLine.replace('A', '*')}\n\n${exampleNote}`,
      /proof line 1 is not/,
    ],
    ['a proof line with a carriage return', `old 1\n${proofLine}\r\n\n${exampleNote}`, /proof line 1 is not/],
    ['a missing final newline', exampleBody.slice(0, -1), /does not end with a newline/],
    ['no checkpoint after the empty line', `old 1\n\n\n`, /no checkpoint/],
    ['an empty body', '', /does not end with a newline/],
  ])('refuses %s', (_, text, refusal) => {
    expect(parseAddCheckpointBody(text)).toEqual({ invalid: expect.stringMatching(refusal) });
  });
});

describe('the 409 answer', () => {
  it('writes and reads "N\\n" as text/x.tlog.size', () => {
    expect(TLOG_SIZE_CONTENT_TYPE).toBe('text/x.tlog.size');
    expect(tlogSizeBody(20852014)).toBe('20852014\n');
    expect(tlogSizeBody(0)).toBe('0\n');
    expect(parseTlogSize('20852014\n')).toBe(20852014);
    expect(parseTlogSize('0\n')).toBe(0);
    expect(() => tlogSizeBody(-1)).toThrow(WitnessProtocolError);
  });

  it.each(['20852014', '012\n', '-1\n', '1 \n', '\n', '1\n\n', 'x\n', '9007199254740993\n'])(
    'refuses %j',
    (body) => {
      expect(parseTlogSize(body)).toBeUndefined();
    },
  );
});

describe('the 200 answer', () => {
  // The spec's example response body.
  const lines = [
    '— witness.example/w1 CMp+6LWBU0anHGH5aNDTJkH/gj79sG+T6+iP2ThYN5krrDJbR1HDnucjL39QsZTSvVjyQLrdk3DXDqI5G2HgLatVs0pWh6Up69HVOw==',
    '— witness.example/w1 I7rEps0pvK2UqkS2gSpVUDhrhVtQV9lgF6pRrWAvjJHjyWpW7VcE3SiOlVlbQNt64vWhO+DlkL0+UfzuOBMh9ChdMkP1vi/lCAsmlw==',
    '— witness.example/w2 AWui8Sk55XjYLOijihBjhqEH6nS1ndDymE0a+6idX7pLcnoB+dhnz0854aLZgrrKbYKA7nC3HNJhm/kWl7oJlqU3rXXvpysAdyP3wQ==',
  ];

  it("reads the spec's example into its lines", () => {
    expect(parseCosignatureLines(`${lines.join('\n')}\n`)).toEqual(lines);
  });

  it.each([
    ['an empty body', '', /no cosignature line/],
    ['no final newline', lines[0] as string, /does not end with a newline/],
    ['an empty line', `${lines[0]}\n\n${lines[1]}\n`, /is not "— NAME BASE64": ""/],
    ['a line without the dash', `${(lines[0] as string).slice(2)}\n`, /is not "— NAME BASE64"/],
    ['a line without base64', '— witness.example/w1\n', /is not "— NAME BASE64"/],
    ['a line of too few bytes', '— witness.example/w1 AAAA\n', /is not "— NAME BASE64"/],
    ['more than 100 lines', `${lines[0]}\n`.repeat(101), /more than 100 lines/],
  ])('refuses %s', (_, body, refusal) => {
    expect(parseCosignatureLines(body)).toEqual({ invalid: expect.stringMatching(refusal) });
  });
});
