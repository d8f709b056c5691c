import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cosignerKeyLine } from '../../src/tlog/cosignature.js';
import type { Sha256 } from '../../src/tlog/merkle.js';
import { verifierKeyLine } from '../../src/tlog/note.js';
import { describeQuorum, parseWitnessPolicy, type QuorumRule, quorumMet } from '../../src/tlog/policy.js';

/** C2SP tlog-policy (src/tlog/policy.ts): the spec's example read, and each refusal with its line. */

const sha256: Sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

/** Distinct public keys, one per seed byte (the policy checks only their form). */
const publicKey = (seed: number) => new Uint8Array(32).fill(seed);
const logKey = (seed: number, name = 'case-read.test/audit') =>
  verifierKeyLine(sha256, name, publicKey(seed));
const witnessKey = (seed: number, name = `witness.example/${seed}`) =>
  cosignerKeyLine(sha256, name, publicKey(seed));

const parsed = (text: string) => {
  const policy = parseWitnessPolicy(sha256, text);
  if ('invalid' in policy) throw new Error(policy.invalid);
  return policy;
};

describe('a policy read', () => {
  it("reads the spec's example, with comments, blank lines, tabs and URLs", () => {
    const policy = parsed(
      [
        '# The trail and its witnesses',
        `log ${logKey(1)} https://audit.example/`,
        '',
        `witness X1 ${witnessKey(11)} https://x1.example/`,
        `\twitness X2\t${witnessKey(12)}`,
        `witness X3 ${witnessKey(13)}   `,
        'group X-witnesses 2 X1 X2 X3',
        '   # indented comment',
        `witness Y1 ${witnessKey(21)}`,
        `witness Y2 ${witnessKey(22)}`,
        `witness Y3 ${witnessKey(23)} http://127.0.0.1:8080/w`,
        'group Y-witnesses any Y1 Y2 Y3',
        '',
        'group X-and-Y all X-witnesses Y-witnesses',
        'quorum X-and-Y',
        '',
      ].join('\n'),
    );
    expect(policy.logs).toEqual([
      {
        vkey: logKey(1),
        key: expect.objectContaining({ name: 'case-read.test/audit', publicKey: publicKey(1) }),
        url: 'https://audit.example/',
        line: 2,
      },
    ]);
    expect(policy.witnesses.map((w) => [w.name, w.line, w.url])).toEqual([
      ['X1', 4, 'https://x1.example/'],
      ['X2', 5, undefined],
      ['X3', 6, undefined],
      ['Y1', 9, undefined],
      ['Y2', 10, undefined],
      ['Y3', 11, 'http://127.0.0.1:8080/w'],
    ]);
    expect(policy.witnesses[1]).not.toHaveProperty('url');
    expect(policy.witnesses[0]?.key).toMatchObject({ name: 'witness.example/11', publicKey: publicKey(11) });
    expect(describeQuorum(policy.quorum)).toBe('2 of (2 of (X1, X2, X3), 1 of (Y1, Y2, Y3))');
  });

  it('reads "quorum none" with no witnesses, a quorum of one witness, and a last line without a newline', () => {
    const none = parsed('quorum none');
    expect(none).toEqual({ logs: [], witnesses: [], quorum: { kind: 'none' } });
    expect(quorumMet(none.quorum, new Set())).toBe(true);
    expect(describeQuorum(none.quorum)).toBe('none');
    const one = parsed(`witness w ${witnessKey(5)}\nquorum w\n`);
    expect(one.quorum).toEqual({ kind: 'witness', name: 'w' });
    expect(quorumMet(one.quorum, new Set(['w']))).toBe(true);
    expect(quorumMet(one.quorum, new Set(['v']))).toBe(false);
  });
});

describe('quorumMet over nested groups', () => {
  const policy = parsed(
    [
      ...[1, 2, 3, 4, 5].map((i) => `witness w${i} ${witnessKey(i)}`),
      'group a 2 w1 w2 w3',
      'group b any w4 w5',
      'group top all a b',
      'quorum top',
    ].join('\n'),
  );
  it.each([
    [[], false],
    [['w1', 'w2', 'w3', 'w4', 'w5'], true],
    [['w1', 'w2', 'w4'], true],
    [['w2', 'w3', 'w5'], true],
    [['w1', 'w4', 'w5'], false],
    [['w1', 'w2', 'w3'], false],
    [['w1', 'w2', 'a', 'b', 'top'], false],
  ])('cosigned by %j: %s', (by, met) => {
    expect(quorumMet(policy.quorum, new Set(by))).toBe(met);
  });

  it('counts a member group as one, whatever its own k', () => {
    const k: QuorumRule = {
      kind: 'group',
      name: 'g',
      k: 2,
      members: [
        { kind: 'witness', name: 'x' },
        {
          kind: 'group',
          name: 'h',
          k: 1,
          members: [
            { kind: 'witness', name: 'y' },
            { kind: 'witness', name: 'z' },
          ],
        },
      ],
    };
    expect(quorumMet(k, new Set(['y', 'z']))).toBe(false);
    expect(quorumMet(k, new Set(['x', 'z']))).toBe(true);
  });
});

describe('a policy refused, with its line', () => {
  const w1 = `witness w1 ${witnessKey(1)}`;
  const w2 = `witness w2 ${witnessKey(2)}`;
  it.each([
    [
      'a name used before it is defined',
      ['group g any w1', w1, 'quorum g'],
      /^line 1: "w1" is not defined on an earlier line$/,
    ],
    ['a quorum naming what comes later', ['quorum w1', w1], /^line 1: "w1" is not defined/],
    [
      'a member listed twice in a group',
      [w1, w2, 'group g any w1 w2 w1', 'quorum g'],
      /^line 3: "w1" is already a member of "g"; a name is a member once$/,
    ],
    [
      'a member of two groups',
      [w1, w2, 'group g any w1', 'group h any w1 w2', 'quorum h'],
      /^line 4: "w1" is already a member of "g"/,
    ],
    [
      'a name defined twice',
      [w1, `witness w1 ${witnessKey(3)}`, 'quorum w1'],
      /^line 2: "w1" is already defined$/,
    ],
    [
      'a group taking a witness name',
      [w1, 'group w1 any w1', 'quorum w1'],
      /^line 2: "w1" is already defined$/,
    ],
    [
      'a duplicate witness key',
      [w1, `witness w2 ${witnessKey(1, 'other.example/name')}`, 'quorum w1'],
      /^line 2: a witness with this key is already listed$/,
    ],
    [
      'a duplicate log',
      [`log ${logKey(1)}`, '', `log ${logKey(1, 'other.example/log')}`, 'quorum none'],
      /^line 3: a log with this key is already listed$/,
    ],
    [
      'k = 0',
      [w1, w2, 'group g 0 w1 w2', 'quorum g'],
      /^line 3: the threshold 0 is not between 1 and its 2 members$/,
    ],
    [
      'k > n',
      [w1, w2, 'group g 3 w1 w2', 'quorum g'],
      /^line 3: the threshold 3 is not between 1 and its 2 members$/,
    ],
    [
      'k with a leading zero',
      [w1, w2, 'group g 02 w1 w2', 'quorum g'],
      /^line 3: the threshold "02" is not all, any or a decimal number$/,
    ],
    ['a group with no members', [w1, 'group g any', 'quorum g'], /^line 2: a group line is/],
    [
      'two quorum lines',
      [w1, 'quorum w1', 'quorum none'],
      /^line 3: a policy has one quorum line; this is a second$/,
    ],
    ['no quorum line', [w1, '# quorum w1'], /^the policy has no quorum line/],
    ['an empty policy', [''], /^the policy has no quorum line/],
    [
      'none as a member',
      [w1, 'group g any w1 none', 'quorum g'],
      /^line 2: "none" cannot be a group member$/,
    ],
    [
      'none as a witness name',
      [`witness none ${witnessKey(1)}`, 'quorum none'],
      /^line 1: "none" is predefined/,
    ],
    ['none as a group name', [w1, 'group none any w1', 'quorum none'], /^line 2: "none" is predefined/],
    ['a carriage return', [`${w1}\r`, 'quorum w1'], /^line 1: it holds a control character/],
    ['a NUL', [w1, 'quorum w1 # \u0000'], /^line 2: it holds a control character/],
    ['DEL', [w1, '# \u007f', 'quorum w1'], /^line 2: it holds a control character/],
    [
      'a witness key of type 0x01',
      [`witness w1 ${logKey(1, 'w.example/1')}`, 'quorum w1'],
      /^line 1: a witness key is a cosigner key \(type 0x04\), not a note key \(0x01\)$/,
    ],
    [
      'a log key of type 0x04',
      [`log ${witnessKey(1)}`, 'quorum none'],
      /^line 1: a log key is a note key \(type 0x01\), not a cosigner key \(0x04\)$/,
    ],
    [
      'a log key whose id is wrong',
      [`log ${logKey(1).replace(/\+[0-9a-f]{8}\+/, '+00000000+')}`, 'quorum none'],
      /^line 1: the log key: its key id does not match/,
    ],
    [
      'a witness key that is not a key',
      ['witness w1 nonsense', 'quorum w1'],
      /^line 1: the witness key: a verifier key is NAME\+KEYID\+KEY$/,
    ],
    ['an unknown keyword', [w1, 'witnesses w2', 'quorum w1'], /^line 2: unknown keyword "witnesses"/],
    ['a keyword in capitals', ['QUORUM none'], /^line 1: unknown keyword "QUORUM"/],
    [
      'a log line with two URLs',
      [`log ${logKey(1)} https://a.example/ https://b.example/`, 'quorum none'],
      /^line 1: a log line is "log <vkey> \[<url>\]"$/,
    ],
    ['a witness line without a key', ['witness w1', 'quorum none'], /^line 1: a witness line is/],
    ['a quorum line with two names', [w1, w2, 'quorum w1 w2'], /^line 3: a quorum line is "quorum <name>"$/],
    [
      'a URL that is not http(s)',
      [`witness w1 ${witnessKey(1)} ftp://w.example/`, 'quorum w1'],
      /^line 1: "ftp:\/\/w.example\/" is not an absolute http\(s\) URL$/,
    ],
    [
      'a relative URL',
      [`log ${logKey(1)} /audit`, 'quorum none'],
      /^line 1: "\/audit" is not an absolute http\(s\) URL$/,
    ],
  ])('%s', (_, lines, refusal) => {
    const policy = parseWitnessPolicy(sha256, `${lines.join('\n')}\n`);
    expect(policy).toEqual({ invalid: expect.stringMatching(refusal) });
  });

  it('takes a tab, and octets above 0x7F in names and comments', () => {
    const policy = parsed(
      `# Zeugen — ünïcode\nwitness\tK ${witnessKey(1)}\nwitness \u212a ${witnessKey(2)}\ngroup g all K \u212a\nquorum g\n`,
    );
    expect(policy.witnesses.map((w) => w.name)).toEqual(['K', '\u212a']);
  });
});
