import { describe, expect, it } from 'vitest';
import {
  cosignerFromSkey,
  cosignerVerifier,
  newCosignerKey,
} from '../../../src/adapters/crypto/cosigner-keys.js';
import { isLoopbackHost } from '../../../src/adapters/shared/loopback.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import { cosignedBy, meetsPolicy, policyProblems } from '../../../src/app/audit/witness-policy.js';
import { cosignatureLine, withSignatureLines } from '../../../src/tlog/cosignature.js';
import {
  checkpointText,
  type NoteVerifierKey,
  parseVerifierKey,
  signNote,
  verifierKeyLine,
} from '../../../src/tlog/note.js';
import { parseWitnessPolicy, type WitnessPolicy } from '../../../src/tlog/policy.js';

/**
 * The application's checks of a witness policy (src/app/audit/witness-policy.ts): the trail's
 * own log among its logs, https off loopback, and a checkpoint against the quorum.
 */

const origin = 'case-read.test/audit';
const logVkey = verifierKeyLine(sha256Bytes, origin, new Uint8Array(32).fill(1));
const otherLogVkey = verifierKeyLine(sha256Bytes, origin, new Uint8Array(32).fill(2));

const parsed = (text: string): WitnessPolicy => {
  const policy = parseWitnessPolicy(sha256Bytes, text);
  if ('invalid' in policy) throw new Error(policy.invalid);
  return policy;
};

const witness = (name: string) => cosignerFromSkey(newCosignerKey(`witness.example/${name}`).skey);

describe('policyProblems', () => {
  const context = { origin, logVkey, isLoopback: isLoopbackHost };
  const w = witness('a');

  it('finds none in a policy naming the trail, its witnesses on https or loopback', () => {
    const policy = parsed(
      [
        `log ${verifierKeyLine(sha256Bytes, 'another.example/log', new Uint8Array(32).fill(2))}`,
        `log ${logVkey}`,
        `witness a ${w.vkey} https://witness.example/a`,
        `witness b ${witness('b').vkey} http://127.0.0.1:7000/b`,
        `witness c ${witness('c').vkey} http://[::1]:7000/c`,
        `witness d ${witness('d').vkey} http://localhost:7000/`,
        'group g any a b c d',
        'quorum g',
      ].join('\n'),
    );
    expect(policyProblems(policy, context)).toEqual([]);
    expect(policyProblems(policy, { ...context, urlRequired: true })).toEqual([]);
    const key = parseVerifierKey(sha256Bytes, logVkey) as NoteVerifierKey;
    expect(policyProblems(policy, { ...context, logVkey: key })).toEqual([]);
    expect(policyProblems(policy, { origin, isLoopback: isLoopbackHost })).toEqual([]);
  });

  it("names a policy without the trail's log, or with its origin under another key", () => {
    expect(policyProblems(parsed('quorum none'), context)).toEqual([
      'no log line names this trail\'s origin "case-read.test/audit"',
    ]);
    expect(policyProblems(parsed(`\nlog ${otherLogVkey}\nquorum none`), context)).toEqual([
      'line 2: the log "case-read.test/audit" has a key that is not this trail\'s',
    ]);
    // Without the trail's key, the origin alone is checked.
    expect(
      policyProblems(parsed(`log ${otherLogVkey}\nquorum none`), { origin, isLoopback: isLoopbackHost }),
    ).toEqual([]);
    expect(
      policyProblems(parsed(`log ${logVkey}\nquorum none`), { ...context, logVkey: 'nonsense' }),
    ).toEqual(["the trail's log key is not a verifier key line"]);
  });

  it('names a witness reached over http off loopback, and one without a URL when one is required', () => {
    const policy = parsed(
      [
        `log ${logVkey}`,
        `witness a ${w.vkey} http://witness.example/a`,
        `witness b ${witness('b').vkey}`,
        `witness c ${witness('c').vkey} http://10.0.0.1/c`,
        'group g all a b c',
        'quorum g',
      ].join('\n'),
    );
    expect(policyProblems(policy, context)).toEqual([
      'line 2: witness "a" is reached over http:// off loopback; use https://',
      'line 4: witness "c" is reached over http:// off loopback; use https://',
    ]);
    expect(policyProblems(policy, { ...context, urlRequired: true })).toEqual([
      'line 2: witness "a" is reached over http:// off loopback; use https://',
      'line 3: witness "b" has no URL; submitting checkpoints to it needs one',
      'line 4: witness "c" is reached over http:// off loopback; use https://',
    ]);
    const hosts: string[] = [];
    policyProblems(parsed(`witness a ${w.vkey} http://[::1]:1/\nquorum a`), {
      origin,
      isLoopback: (host) => {
        hosts.push(host);
        return true;
      },
    });
    expect(hosts).toEqual(['[::1]']);
  });
});

describe('cosignedBy and meetsPolicy', () => {
  const log = { name: origin, keyId: 0, sign: () => new Uint8Array(64) };
  const text = checkpointText(origin, 5, new Uint8Array(32).fill(3));
  const note = signNote(text, log);
  const [a, b, c, stranger] = [witness('a'), witness('b'), witness('c'), witness('s')];
  const line = (signer: typeof a) => cosignatureLine(signer, text, 1700000000).slice(0, -1);
  const policyOf = (quorum: string) =>
    parsed(
      [
        `log ${logVkey}`,
        `witness A ${a.vkey}`,
        `witness B ${b.vkey}`,
        `witness C ${c.vkey}`,
        // A name is a group member once: the quorum's group is the only one.
        quorum === 'quorum any' ? 'group any any A B C' : quorum === 'quorum two' ? 'group two 2 A B C' : '',
        quorum,
      ].join('\n'),
    );

  it('names the policy witnesses whose cosignatures verify, ignoring others', () => {
    const cosigned = withSignatureLines(note, [line(b), line(stranger), line(a)]);
    expect(cosignedBy(cosigned, policyOf('quorum two'), cosignerVerifier)).toEqual({ witnesses: ['A', 'B'] });
    expect(cosignedBy(note, policyOf('quorum two'), cosignerVerifier)).toEqual({ witnesses: [] });
  });

  it.each([
    ['quorum none', [], true],
    ['quorum A', [], false],
    ['quorum A', ['a'], true],
    ['quorum A', ['b', 's'], false],
    ['quorum any', ['c'], true],
    ['quorum two', ['c'], false],
    ['quorum two', ['c', 's'], false],
    ['quorum two', ['a', 'c'], true],
  ])('%s, cosigned by %j: %s', (quorum, by, met) => {
    const signers = { a, b, c, s: stranger } as Record<string, typeof a>;
    const cosigned = withSignatureLines(
      note,
      by.map((name) => line(signers[name] as typeof a)),
    );
    expect(meetsPolicy(cosigned, policyOf(quorum), cosignerVerifier)).toBe(met);
  });

  it("refuses a note on which a policy witness's cosignature does not verify, naming it", () => {
    const cosigned = withSignatureLines(note, [line(a), line(b), line(c)]);
    const changed = cosigned.replace(
      line(b),
      // One base64 digit of the signature changed: to B where it was A, else to A.
      line(b).replace(/(.)(.{10})$/, (_, digit, rest) => `${digit === 'A' ? 'B' : 'A'}${rest}`),
    );
    expect(changed).not.toBe(cosigned);
    expect(cosignedBy(changed, policyOf('quorum any'), cosignerVerifier)).toEqual({
      witnesses: ['A', 'C'],
      refused: 'B',
    });
    expect(meetsPolicy(changed, policyOf('quorum any'), cosignerVerifier)).toBe(false);
    expect(meetsPolicy(cosigned, policyOf('quorum any'), cosignerVerifier)).toBe(true);
  });

  it('says when the note is not a signed note at all', () => {
    expect(cosignedBy(text, policyOf('quorum none'), cosignerVerifier)).toEqual({
      witnesses: [],
      malformed: 'the note has no blank line before its signatures',
    });
    expect(meetsPolicy(text, policyOf('quorum none'), cosignerVerifier)).toBe(false);
  });
});
