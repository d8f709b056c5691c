import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateCheckpointKeys } from '../../../src/adapters/crypto/checkpoint-keys.js';
import {
  CosignerKeyError,
  cosignerFromSkey,
  cosignerVerifier,
  newCosignerKey,
  readCosignerKeyFile,
  writeCosignerKeyFile,
} from '../../../src/adapters/crypto/cosigner-keys.js';
import { noteSigner } from '../../../src/adapters/crypto/note-keys.js';
import { sha256Bytes } from '../../../src/adapters/shared/sha256.js';
import { cosignatureLine, parseCosignerKey, withSignatureLines } from '../../../src/tlog/cosignature.js';
import { checkpointText, openNote, signNote, verifyWith } from '../../../src/tlog/note.js';
import { goChecks, skipWithoutGoReference } from '../../support/go-reference.js';

/**
 * A witness's Ed25519 cosigner key (src/adapters/crypto/cosigner-keys.ts): made, written, read
 * back, and its cosignatures opened, by this code and by Go's note.Open.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-cosigner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

const origin = 'case-read.test/audit';
const root = new Uint8Array(32).fill(7);

describe('a cosigner key', () => {
  it('is made as Go writes a signer key, and read back to the same verifier key', () => {
    const { skey, vkey } = newCosignerKey('witness.example/w1');
    expect(skey).toMatch(/^PRIVATE\+KEY\+witness\.example\/w1\+[0-9a-f]{8}\+B[A-Za-z0-9+/]{43}$/);
    expect(vkey).toMatch(/^witness\.example\/w1\+[0-9a-f]{8}\+B[A-Za-z0-9+/]{43}$/);
    expect(skey.split('+')[3]).toBe(vkey.split('+')[1]);
    const signer = cosignerFromSkey(`\n${skey}\n`);
    expect(signer.vkey).toBe(vkey);
    expect(parseCosignerKey(sha256Bytes, vkey)).toEqual({
      name: signer.name,
      keyId: signer.keyId,
      publicKey: signer.publicKey,
    });
    expect(newCosignerKey('witness.example/w1').vkey).not.toBe(vkey);
  });

  it("signs cosignatures its verifier opens, and another key's verifier does not", () => {
    const signer = cosignerFromSkey(newCosignerKey('witness.example/w1').skey);
    const text = checkpointText(origin, 3, root);
    const note = `${text}\n— ${origin} AAAAAAAA\n`;
    const cosigned = withSignatureLines(note, [cosignatureLine(signer, text, 1700000000).slice(0, -1)]);
    const key = parseCosignerKey(sha256Bytes, signer.vkey);
    if ('invalid' in key) throw new Error(key.invalid);
    const verifier = cosignerVerifier(key);
    expect(openNote(cosigned, [verifier], verifyWith([verifier]))).toMatchObject({ ok: true });
    const other = cosignerFromSkey(newCosignerKey('witness.example/w1').skey);
    const impostor = cosignerVerifier({ ...key, publicKey: other.publicKey });
    expect(openNote(cosigned, [impostor], verifyWith([impostor]))).toMatchObject({
      ok: false,
      why: 'bad-signature',
    });
  });

  it('refuses a private key line that is not one, naming what is wrong and never the key', () => {
    const { skey } = newCosignerKey('witness.example/w1');
    const [, name = '', id = '', key = ''] = /^PRIVATE\+KEY\+([^+]*)\+([^+]*)\+(.*)$/.exec(skey) ?? [];
    const seed = Buffer.from(key, 'base64');
    const asNoteKey = Buffer.concat([Buffer.of(0x01), seed.subarray(1)]).toString('base64');
    const otherId = ((Number.parseInt(id, 16) ^ 1) >>> 0).toString(16).padStart(8, '0');
    // Upper case that differs from the id: an id of digits alone (1 in 43) has none to raise.
    const upperId = /[a-f]/.test(id) ? id.toUpperCase() : `A${id.slice(1)}`;
    const cases: [string, RegExp][] = [
      [`${name}+${id}+${key}`, /not a private key line/],
      [`PRIVATE+KEY+${name}+${id}`, /not a private key line/],
      [`PRIVATE+KEY+${name}+${otherId}+${key}`, /its key id does not match its name and key/],
      [`PRIVATE+KEY+${name}+${upperId}+${key}`, /its key id is not 8 lower-case hex digits/],
      [`PRIVATE+KEY+${name}+${id}+${asNoteKey}`, /not a cosigner key \(0x04/],
      [`PRIVATE+KEY+${name}+${id}+${key.slice(0, -4)}`, /not a cosigner key/],
      [`PRIVATE+KEY+wit ness+${id}+${key}`, /its name is not a key name/],
    ];
    for (const [text, refusal] of cases) {
      let error: unknown;
      try {
        cosignerFromSkey(text);
      } catch (e) {
        error = e;
      }
      expect(error, text).toBeInstanceOf(CosignerKeyError);
      expect((error as Error).message).toMatch(refusal);
      expect((error as Error).message).not.toContain(key.slice(4, 20));
    }
    expect(() => newCosignerKey('has space')).toThrow(CosignerKeyError);
  });

  it('is written for its owner alone, never over a file, and read back; a bad file is named', () => {
    const { skey, vkey } = newCosignerKey('witness.example/w1');
    const path = join(dir, 'witness.key');
    writeCosignerKeyFile(path, skey);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readCosignerKeyFile(path).vkey).toBe(vkey);
    expect(() => writeCosignerKeyFile(path, newCosignerKey('witness.example/w2').skey)).toThrow(/EEXIST/);
    expect(readCosignerKeyFile(path).vkey).toBe(vkey);
    expect(() => readCosignerKeyFile(join(dir, 'missing.key'))).toThrow(
      new CosignerKeyError(`the cosigner key file ${join(dir, 'missing.key')} cannot be read (ENOENT)`),
    );
    const bad = file('bad.key', vkey);
    expect(() => readCosignerKeyFile(bad)).toThrow(
      /^the cosigner key file .*bad\.key: it is not a private key line/,
    );
  });
});

describe.skipIf(skipWithoutGoReference)(
  "cosignatures, checked by Go's sumdb/note with a cosignature/v1 verifier",
  () => {
    it('opens a checkpoint cosigned by two witnesses ("ok 2"), and fails one whose timestamp was changed', async () => {
      const keys = await generateCheckpointKeys();
      const log = noteSigner(keys.privatePem, origin);
      const w1 = cosignerFromSkey(newCosignerKey('witness.example/w1').skey);
      const w2 = cosignerFromSkey(newCosignerKey('witness.example/w2').skey);
      const w3 = cosignerFromSkey(newCosignerKey('witness.example/w3').skey);
      const text = checkpointText(origin, 20852163, root);
      const note = signNote(text, log);
      const line = (signer: typeof w1, time: number) => cosignatureLine(signer, text, time).slice(0, -1);
      const cosigned = withSignatureLines(note, [line(w1, 1679315147), line(w2, 1679315148)]);
      // A cosignature by a witness Go is not given is ignored.
      const withStranger = withSignatureLines(cosigned, [line(w3, 1679315149)]);
      const w1Line = line(w1, 1679315147);
      const bytes = Buffer.from(w1Line.split(' ')[2] as string, 'base64');
      bytes[11] = (bytes[11] as number) + 1;
      const moved = cosigned.replace(w1Line, `— witness.example/w1 ${bytes.toString('base64')}`);
      expect(moved).not.toBe(cosigned);

      const vkey = file('log.vkey', `${log.vkey}\n`);
      const witnesses = file('witnesses.vkeys', `${w1.vkey}\n${w2.vkey}\n`);
      const checks = [
        `cosig ${vkey} ${witnesses} ${file('cosigned', cosigned)}`,
        `cosig ${vkey} ${witnesses} ${file('stranger', withStranger)}`,
        `cosig ${vkey} ${witnesses} ${file('moved', moved)}`,
        `cosig ${vkey} ${witnesses} ${file('uncosigned', note)}`,
        `cosig ${vkey} ${witnesses} ${file('changed', cosigned.replace('20852163', '20852164'))}`,
      ];
      const results = goChecks(checks);
      expect(results).toEqual([
        'ok 2',
        'ok 2',
        expect.stringMatching(/^fail: .*invalid signature/),
        'ok 0',
        expect.stringMatching(/^fail: /),
      ]);
    }, 120_000);
  },
);
