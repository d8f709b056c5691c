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
    ? (...parts) => Buffer.from(crypto.hash('sha256', joined(parts), 'hex'), 'hex')
    : (...parts) => {
        const hash = crypto.createHash('sha256');
        for (const part of parts) hash.update(part);
        return hash.digest();
      };

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
