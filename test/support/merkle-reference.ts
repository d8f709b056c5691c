import { createHash } from 'node:crypto';
import { auditEntryOf } from '../../src/domain/audit/canonical-text.js';
import type { StoredAuditRecord } from '../../src/domain/audit/record.js';

/**
 * RFC 9162 §2.1.1's Merkle Tree Hash, written the way the RFC states it (recursively, from the
 * entries), to check the stores' tree against: nothing of src/tlog/merkle.ts is used.
 */
const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

export function referenceRoot(entries: readonly Uint8Array[]): Uint8Array {
  const n = entries.length;
  if (n === 0) return sha256();
  if (n === 1) return sha256(Uint8Array.of(0), entries[0] as Uint8Array);
  let k = 1;
  while (k * 2 < n) k *= 2;
  return sha256(Uint8Array.of(1), referenceRoot(entries.slice(0, k)), referenceRoot(entries.slice(k)));
}

/**
 * The log's tree grown over every record, against the reference root of the records' entries
 * (format 4 and those written before): the hex of both, to compare.
 */
export async function grownAndReferenceRoots(log: {
  growTree(): Promise<{ readonly root?: Uint8Array }>;
  query(filter: { limit: number }): Promise<readonly StoredAuditRecord[]>;
}): Promise<{ grown: string; reference: string }> {
  const grown = await log.growTree();
  const entries = (await log.query({ limit: 1_000_000 })).map((r) =>
    new TextEncoder().encode(auditEntryOf(r) ?? ''),
  );
  return {
    grown: Buffer.from(grown.root ?? []).toString('hex'),
    reference: Buffer.from(referenceRoot(entries)).toString('hex'),
  };
}
