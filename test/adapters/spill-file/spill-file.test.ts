import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spillFiles } from '../../../src/adapters/spill-file/spill-file.js';

/**
 * Spills as temporary files (decisions §23): what is appended comes back whole, in pieces of
 * the size asked; the file has no name another process could open (unlinked at once, in a
 * directory of its owner only); closing gives it back, and reading after it fails; one left
 * open closes itself.
 */

let parent: string;
beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), 'case-read-spill-test-'));
});
afterEach(() => rmSync(parent, { recursive: true, force: true }));

const bytesOf = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 256);

async function readAll(pieces: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; sizes: number[] }> {
  const got: Uint8Array[] = [];
  // Each piece is valid until the next is asked for: kept as a copy.
  for await (const piece of pieces) got.push(Uint8Array.from(piece));
  return { bytes: Buffer.concat(got), sizes: got.map((p) => p.length) };
}

describe('spill files', () => {
  it('give back what was appended, whole, in pieces of at most the size asked', async () => {
    const spill = await spillFiles({ parent })();
    const written = [bytesOf(100_000, 1), bytesOf(1, 2), bytesOf(65_536, 3)];
    for (const bytes of written) await spill.append(bytes);
    const { bytes, sizes } = await readAll(spill.pieces(30_000));
    expect(bytes.equals(Buffer.concat(written))).toBe(true);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(30_000);
    // Read again from the start.
    expect((await readAll(spill.pieces(1 << 20))).bytes.equals(Buffer.concat(written))).toBe(true);
    await spill.close();
    await spill.close();
  });

  it('have no name in their directory, which only its owner may enter', async () => {
    const open = spillFiles({ parent });
    const [a, b] = await Promise.all([open(), open()]);
    await a?.append(bytesOf(10, 1));
    await b?.append(bytesOf(10, 2));
    const [directory] = readdirSync(parent);
    expect(directory).toMatch(/^case-read-spill-/);
    expect(statSync(join(parent, directory as string)).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(parent, directory as string))).toEqual([]);
    expect((await readAll(a?.pieces(4) ?? [])).bytes).toEqual(Buffer.from(bytesOf(10, 1)));
    expect((await readAll(b?.pieces(4) ?? [])).bytes).toEqual(Buffer.from(bytesOf(10, 2)));
    await a?.close();
    await b?.close();
  });

  it('refuse to be read or written once closed, and close themselves when left', async () => {
    const spill = await spillFiles({ parent })();
    await spill.append(bytesOf(10, 1));
    await spill.close();
    await expect(readAll(spill.pieces(4))).rejects.toThrow(/closed/);
    await expect(spill.append(bytesOf(1, 1))).rejects.toThrow(/closed/);
    const left = await spillFiles({ parent, maxAgeMs: 1 })();
    await left.append(bytesOf(10, 1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(readAll(left.pieces(4))).rejects.toThrow(/closed/);
  });

  it('make their directory again when it was removed', async () => {
    const open = spillFiles({ parent });
    await (await open()).close();
    for (const entry of readdirSync(parent)) rmSync(join(parent, entry), { recursive: true });
    const spill = await open();
    await spill.append(bytesOf(3, 3));
    expect((await readAll(spill.pieces(8))).bytes).toEqual(Buffer.from(bytesOf(3, 3)));
    await spill.close();
  });
});
