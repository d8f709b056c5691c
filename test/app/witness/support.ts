import { createHash, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from 'node:crypto';
import type { WitnessState } from '../../../src/ports/witness-state.js';

/**
 * A log for the witness tests, written from the specs rather than from src/tlog: RFC 6962's
 * Merkle tree hash and consistency proof (§2.1, §2.1.2, recursively, as the RFC states them),
 * C2SP checkpoints signed as C2SP signed notes with Ed25519 (node:crypto), the tlog-witness
 * request body, and a check of a cosignature/v1 line. So the witness is held to the formats,
 * not to the code it shares with this project's own log.
 */

const sha256 = (...parts: Uint8Array[]): Uint8Array => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** The empty tree's root: SHA-256 of nothing (RFC 6962 §2.1). */
export const EMPTY_ROOT = sha256();

/** RFC 6962 §2.1: MTH(D[n]). */
function treeHash(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return sha256(Uint8Array.of(0), leaves[0] as Uint8Array);
  const k = largestPowerOfTwoBelow(leaves.length);
  return sha256(Uint8Array.of(1), treeHash(leaves.slice(0, k)), treeHash(leaves.slice(k)));
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** RFC 6962 §2.1.2: SUBPROOF(m, D[n], b). */
function subproof(m: number, leaves: readonly Uint8Array[], complete: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return complete ? [] : [treeHash(leaves)];
  const k = largestPowerOfTwoBelow(n);
  if (m <= k) return [...subproof(m, leaves.slice(0, k), complete), treeHash(leaves.slice(k))];
  return [...subproof(m - k, leaves.slice(k), false), treeHash(leaves.slice(0, k))];
}

/** A signed-note key id: SHA-256(name ‖ 0x0A ‖ type ‖ key)[:4]. */
const keyId = (name: string, type: number, raw: Uint8Array): Uint8Array =>
  sha256(Buffer.from(name), Uint8Array.of(0x0a, type), raw).slice(0, 4);

const rawPublicKey = (key: KeyObject): Uint8Array =>
  new Uint8Array(Buffer.from((key.export({ format: 'jwk' }) as { x: string }).x, 'base64url'));

/** A log: its origin, an Ed25519 key, and records `PREFIX i`. */
export class TestLog {
  readonly vkey: string;
  private readonly key = generateKeyPairSync('ed25519');
  private readonly id: Uint8Array;
  private readonly leaves: Uint8Array[] = [];

  constructor(
    readonly origin: string,
    private readonly prefix = 'record',
    /** The name it signs under: the origin, unless an impostor's. */
    private readonly name = origin,
  ) {
    const raw = rawPublicKey(this.key.publicKey);
    this.id = keyId(this.name, 0x01, raw);
    this.vkey = `${this.name}+${Buffer.from(this.id).toString('hex')}+${b64(Uint8Array.of(0x01, ...raw))}`;
  }

  private grow(size: number): void {
    while (this.leaves.length < size) {
      const entry = Buffer.from(`${this.prefix} ${this.leaves.length}\n`);
      this.leaves.push(sha256(Uint8Array.of(0), entry));
    }
  }

  root(size: number): Uint8Array {
    this.grow(size);
    return treeHash(this.leaves.slice(0, size));
  }

  /** The consistency proof from `old` to `size` (RFC 6962 §2.1.2; empty from 0). */
  proof(old: number, size: number): Uint8Array[] {
    this.grow(size);
    return old === 0 ? [] : subproof(old, this.leaves.slice(0, size), true);
  }

  /** The checkpoint's note text. */
  text(size: number, root = this.root(size)): string {
    return `${this.origin}\n${size}\n${b64(root)}\n`;
  }

  /** The checkpoint of `size` (or of `root` at that size), signed. */
  checkpoint(size: number, root = this.root(size)): string {
    return this.sign(this.text(size, root));
  }

  /** `text` as a note signed by this log's key. */
  sign(text: string): string {
    const signature = sign(null, Buffer.from(text), this.key.privateKey);
    return `${text}\n— ${this.name} ${b64(new Uint8Array([...this.id, ...signature]))}\n`;
  }

  /** The add-checkpoint body from `old` to `size`, with the proof between them unless another is given. */
  body(old: number, size: number, options: { proof?: Uint8Array[]; note?: string } = {}): string {
    const proof = options.proof ?? this.proof(old, size);
    return `old ${old}\n${proof.map((h) => `${b64(h)}\n`).join('')}\n${options.note ?? this.checkpoint(size)}`;
  }
}

/**
 * Whether `line` (`— NAME BASE64`, its newline included) is a cosignature/v1 by the witness
 * of `vkey` (type 0x04) on the note text `text`, timestamped within a minute of now.
 */
export function isCosignature(line: string, vkey: string, text: string): boolean {
  // NAME+KEYID+BASE64: the base64 may hold a '+' too.
  const [, name = '', id = '', key = ''] = /^([^+]*)\+([^+]*)\+(.*)$/.exec(vkey) ?? [];
  const raw = Buffer.from(key, 'base64');
  if (raw[0] !== 0x04 || raw.length !== 33) return false;
  const match = /^— (\S+) (\S+)\n$/.exec(line);
  if (match === null || match[1] !== name) return false;
  const signature = Buffer.from(match[2] ?? '', 'base64');
  if (signature.length !== 4 + 8 + 64 || signature.subarray(0, 4).toString('hex') !== id) return false;
  if (Buffer.from(keyId(name, 0x04, raw.subarray(1))).toString('hex') !== id) return false;
  const time = signature.readBigUInt64BE(4);
  if (time === 0n || Math.abs(Number(time) - Date.now() / 1000) > 60) return false;
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw.subarray(1)).toString('base64url') },
    format: 'jwk',
  });
  return verify(
    null,
    Buffer.from(`cosignature/v1\ntime ${time}\n${text}`),
    publicKey,
    signature.subarray(12),
  );
}

/** One add-checkpoint answer. */
export interface Answer {
  readonly status: number;
  readonly type: string | null;
  readonly body: string;
}

/** POSTs `body` to the witness at `url`. */
export async function submit(url: string, body: string | Uint8Array): Promise<Answer> {
  const response = await fetch(`${url}/add-checkpoint`, { method: 'POST', body });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

export { startWitnessProcess, type WitnessProcess } from '../../support/witness.js';

/**
 * States as witnesses share them, with every reader of `latest` (through any state wrapped)
 * held until `readers` have read: so each judges against the same record, and only the
 * state's compare-and-set tells them apart. Returns the wrapper.
 */
export function readingTogether(readers: number): (state: WitnessState) => WitnessState {
  let waiting: (() => void)[] = [];
  const together = () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length < readers) return;
      for (const go of waiting) go();
      waiting = [];
    });
  return (state) => ({
    description: state.description,
    close: () => state.close(),
    advance: (origin, expected, next) => state.advance(origin, expected, next),
    latest: async (origin) => {
      const held = await state.latest(origin);
      await together();
      return held;
    },
  });
}
