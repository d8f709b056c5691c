import * as crypto from 'node:crypto';

/**
 * Hex SHA-256 of a text, for the adapters that hash on the request path (API key checks,
 * the audit chains). `crypto.hash` (Node ≥ 20.12) hashes in one call, without the Hash
 * object `createHash` builds for each use; a runtime without it uses `createHash`.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * SHA-256 over the concatenation of `parts`, as bytes: the Merkle tree's and the signed notes'
 * hash. By way of hex: Node's `crypto.hash` gives a hex digest in a third of the time it takes
 * to give a Buffer (0.27 against 0.77 µs on Node 20), and decoding it costs less than the
 * difference.
 */
export const sha256Bytes: (...parts: readonly Uint8Array[]) => Uint8Array =
  typeof crypto.hash === 'function'
    ? (...parts) => bytesOfHex(crypto.hash('sha256', joined(parts), 'hex'))
    : (...parts) => {
        const hash = crypto.createHash('sha256');
        for (const part of parts) hash.update(part);
        return hash.digest();
      };

/** The value of each lower-case hex digit, by its character code. */
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;

/**
 * A 64-digit hex digest's 32 bytes, in a plain Uint8Array of their own: one that small lives in
 * V8's heap, where `Buffer.from(hex, 'hex')` takes a slice of an 8 KiB pool outside it, and a
 * subject access request's millions of node hashes left megabytes of pools for the collector
 * (its resident memory grew with them). As fast.
 */
function bytesOfHex(hex: string): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    bytes[i] =
      ((HEX_VALUE[hex.charCodeAt(2 * i)] as number) << 4) | (HEX_VALUE[hex.charCodeAt(2 * i + 1)] as number);
  }
  return bytes;
}

/** One 65-byte buffer for the tree's node hashes (0x01 ‖ left ‖ right), the hot case, reused. */
const node = Buffer.alloc(65);

/** The parts end to end: the node buffer for a node's three, a new one otherwise. */
function joined(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const [prefix, left, right] = parts;
  if (parts.length === 3 && prefix?.length === 1 && left?.length === 32 && right?.length === 32) {
    node[0] = prefix[0] as number;
    node.set(left, 1);
    node.set(right, 33);
    return node;
  }
  return Buffer.concat(parts);
}
