import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  COSIGNATURE_V1,
  cosignatureLine,
  cosignatureTime,
  cosignatureVerifier,
  cosignedMessage,
  cosignerKeyLine,
  parseCosignerKey,
  signatureLinesOf,
  withSignatureLines,
} from '../../src/tlog/cosignature.js';
import type { Sha256 } from '../../src/tlog/merkle.js';
import {
  NoteError,
  type NoteVerifierKey,
  openNote,
  parseVerifierKey,
  signNote,
  verifierKeyLine,
  verifyWith,
} from '../../src/tlog/note.js';

/**
 * C2SP tlog-cosignature/v1 (src/tlog/cosignature.ts): the cosigner's key, the message it signs,
 * and the signature line, checked against the spec's own example where it can be.
 */

const sha256: Sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

const rawPublic = (key: KeyObject) =>
  new Uint8Array(Buffer.from((key.export({ format: 'jwk' }) as { x: string }).x, 'base64url'));

const ed25519Verify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) =>
  signature.length === 64 &&
  verify(
    null,
    message,
    createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') },
      format: 'jwk',
    }),
    signature,
  );

function newKey(name: string, algorithm: number) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = rawPublic(publicKey);
  const line =
    algorithm === COSIGNATURE_V1 ? cosignerKeyLine(sha256, name, raw) : verifierKeyLine(sha256, name, raw);
  const key = (algorithm === COSIGNATURE_V1 ? parseCosignerKey : parseVerifierKey)(sha256, line);
  if ('invalid' in key) throw new Error(key.invalid);
  return { line, key, sign: (message: Uint8Array) => new Uint8Array(sign(null, message, privateKey)) };
}

// The spec's example checkpoint (tlog-cosignature, "Ed25519 signed message").
const exampleText = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
const exampleLogLine =
  '— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=';
const exampleWitnessLine =
  '— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==';

describe('a cosigner key (type 0x04)', () => {
  it('has the id SHA-256(name ‖ 0x0A ‖ 0x04 ‖ key)[:4], and reads back from its line', () => {
    const publicKey = Uint8Array.from({ length: 32 }, (_, i) => i * 7);
    const line = cosignerKeyLine(sha256, 'witness.example.com/w1', publicKey);
    const digest = createHash('sha256')
      .update('witness.example.com/w1\n')
      .update(Uint8Array.of(0x04))
      .update(publicKey)
      .digest();
    expect(line).toBe(
      `witness.example.com/w1+${digest.subarray(0, 4).toString('hex')}+${Buffer.concat([Buffer.of(4), publicKey]).toString('base64')}`,
    );
    expect(parseCosignerKey(sha256, line)).toEqual({
      name: 'witness.example.com/w1',
      keyId: digest.readUInt32BE(0),
      publicKey,
    });
    // The same key as a note key (0x01) has another id.
    expect(verifierKeyLine(sha256, 'witness.example.com/w1', publicKey).split('+')[1]).not.toBe(
      line.split('+')[1],
    );
  });

  it('is refused as a note key, a note key is refused as a cosigner key, and a wrong id is refused', () => {
    const publicKey = new Uint8Array(32).fill(9);
    const cosigner = cosignerKeyLine(sha256, 'w.example/1', publicKey);
    const note = verifierKeyLine(sha256, 'w.example/1', publicKey);
    expect(parseVerifierKey(sha256, cosigner)).toEqual({
      invalid: 'its key is not an Ed25519 key (0x01 and 32 bytes, base64)',
    });
    expect(parseCosignerKey(sha256, note)).toEqual({
      invalid: 'its key is not an Ed25519 key (0x04 and 32 bytes, base64)',
    });
    const [name, id, key] = cosigner.split('+') as [string, string, string];
    const otherId = ((Number.parseInt(id, 16) + 1) >>> 0).toString(16).padStart(8, '0');
    expect(parseCosignerKey(sha256, `${name}+${otherId}+${key}`)).toEqual({
      invalid: 'its key id does not match its name and key',
    });
  });
});

describe('the cosigned message and the cosignature line', () => {
  it('lays the message out as the spec example: header, time, then the note text', () => {
    expect(new TextDecoder().decode(cosignedMessage(exampleText, 1679315147))).toBe(
      'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
    expect(() => cosignedMessage(exampleText, -1)).toThrow(NoteError);
    expect(() => cosignedMessage(exampleText, 1.5)).toThrow(NoteError);
  });

  it("reads the spec example's timestamp (the time of its signed message), and none from a log's signature", () => {
    expect(cosignatureTime(exampleWitnessLine)).toBe(1679315147);
    expect(cosignatureTime(exampleLogLine)).toBeUndefined();
    expect(cosignatureTime('not a line')).toBeUndefined();
  });

  it('writes KEYID ‖ TIMESTAMP (big-endian) ‖ Ed25519 over the cosigned message', () => {
    const witness = newKey('witness.example/w1', COSIGNATURE_V1);
    const signer = { name: witness.key.name, keyId: witness.key.keyId, sign: witness.sign };
    const line = cosignatureLine(signer, exampleText, 1679315147);
    expect(line).toMatch(/^— witness\.example\/w1 [A-Za-z0-9+/]{102}==\n$/);
    const bytes = Buffer.from(line.slice('— witness.example/w1 '.length, -1), 'base64');
    expect(bytes.length).toBe(4 + 8 + 64);
    expect(bytes.readUInt32BE(0)).toBe(witness.key.keyId);
    expect(bytes.readBigUInt64BE(4)).toBe(1679315147n);
    expect(
      ed25519Verify(witness.key.publicKey, cosignedMessage(exampleText, 1679315147), bytes.subarray(12)),
    ).toBe(true);
    expect(cosignatureTime(line.slice(0, -1))).toBe(1679315147);
    expect(() => cosignatureLine(signer, exampleText.slice(0, -1), 1)).toThrow(NoteError);
  });

  it('opens with the cosigner verifier; a changed timestamp, text or signature length fails it', () => {
    const log = newKey('example.com/behind-the-sofa', 0x01);
    const witness = newKey('witness.example/w1', COSIGNATURE_V1);
    const note = signNote(exampleText, { name: log.key.name, keyId: log.key.keyId, sign: log.sign });
    const line = cosignatureLine(
      { name: witness.key.name, keyId: witness.key.keyId, sign: witness.sign },
      exampleText,
      1700000000,
    );
    const verifier = cosignatureVerifier(witness.key, ed25519Verify);
    const open = (text: string) => openNote(text, [verifier], verifyWith([verifier]));
    const cosigned = withSignatureLines(note, [line.slice(0, -1)]);
    expect(open(cosigned)).toEqual({
      ok: true,
      text: exampleText,
      verifiedBy: [`witness.example/w1+${witness.key.keyId.toString(16).padStart(8, '0')}`],
    });
    // The log's signature alone: no cosignature by the key given.
    expect(open(note)).toMatchObject({ ok: false, why: 'no-key' });
    // One second later in the line: the signature no longer covers it.
    const bytes = Buffer.from(line.slice('— witness.example/w1 '.length, -1), 'base64');
    bytes[11] = (bytes[11] as number) ^ 1;
    const moved = `— witness.example/w1 ${bytes.toString('base64')}`;
    expect(cosignatureTime(moved)).toBe(1700000000 ^ 1);
    expect(open(withSignatureLines(note, [moved]))).toMatchObject({ ok: false, why: 'bad-signature' });
    expect(open(cosigned.replace('20852163', '20852164'))).toMatchObject({ ok: false, why: 'bad-signature' });
    const key: NoteVerifierKey = witness.key;
    expect(cosignatureVerifier(key, ed25519Verify).verify(new Uint8Array(1), new Uint8Array(64))).toBe(false);
  });
});

describe('the signature lines of a note', () => {
  const note = `${exampleText}\n${exampleLogLine}\n`;

  it('lists them, and adds new ones after them once each', () => {
    expect(signatureLinesOf(note)).toEqual([exampleLogLine]);
    expect(signatureLinesOf(exampleText)).toEqual([]);
    const added = withSignatureLines(note, [exampleWitnessLine, exampleLogLine, exampleWitnessLine]);
    expect(added).toBe(`${exampleText}\n${exampleLogLine}\n${exampleWitnessLine}\n`);
    expect(signatureLinesOf(added)).toEqual([exampleLogLine, exampleWitnessLine]);
    expect(withSignatureLines(added, [exampleWitnessLine])).toBe(added);
  });

  it('refuses a text that is not a signed note, and a line that is not a signature line', () => {
    expect(() => withSignatureLines(exampleText, [exampleWitnessLine])).toThrow(NoteError);
    expect(() => withSignatureLines(note, ['witness.example.com/w1 AAAA'])).toThrow(/is not "— NAME BASE64"/);
    expect(() => withSignatureLines(note, [`${exampleWitnessLine}\n— x AAAAAAA=`])).toThrow(NoteError);
  });
});
