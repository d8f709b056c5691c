import { describe, expect, it } from 'vitest';
import { GroupCommit, type WriteBudget } from '../../../src/adapters/shared/group-commit.js';
import { DeadlineExceededError } from '../../../src/ports/deadline.js';

const expiringIn = (ms: number) => ({ expiresAt: performance.now() + ms });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('group commit with deadlines', () => {
  it('writes what one turn appends in one batch, given until the earliest deadline', async () => {
    const writes: { items: string[]; budget: WriteBudget }[] = [];
    const commits = new GroupCommit<string>((items, budget) => {
      writes.push({ items: [...items], budget });
    });
    await Promise.all([
      commits.append('a', expiringIn(500)),
      commits.append('b', expiringIn(200)),
      commits.append('c'),
    ]);
    expect(writes).toHaveLength(1);
    expect(writes[0]?.items).toEqual(['a', 'b', 'c']);
    // Until the earliest deadline, b's.
    expect((writes[0]?.budget ?? 0) - performance.now()).toBeGreaterThan(100);
    expect((writes[0]?.budget ?? 0) - performance.now()).toBeLessThanOrEqual(200);
    await commits.append('d');
    expect(writes[1]).toStrictEqual({ items: ['d'], budget: undefined });
  });

  it('never writes an item whose deadline passed while it waited: it rejects, the others are written', async () => {
    const written: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const commits = new GroupCommit<string>(async (items) => {
      if (items.includes('first')) await held;
      written.push(...items);
    });
    const first = commits.append('first');
    await sleep(5);
    // Queued behind the held write: one with a short deadline, one without.
    const late = commits.append('late', expiringIn(20));
    const patient = commits.append('patient');
    await sleep(60);
    release();
    await first;
    await expect(late).rejects.toBeInstanceOf(DeadlineExceededError);
    await patient;
    expect(written).toEqual(['first', 'patient']);
  });

  it('when the store gives up at the deadline, the items with time left are written next; the others reject', async () => {
    const batches: string[][] = [];
    const commits = new GroupCommit<string>(async (items, budget) => {
      batches.push([...items]);
      if (budget !== undefined && budget - performance.now() < 100) {
        await sleep(budget - performance.now());
        throw new DeadlineExceededError('audit store');
      }
    });
    const soon = commits.append('soon', expiringIn(30));
    const later = commits.append('later', expiringIn(5_000));
    await expect(soon).rejects.toBeInstanceOf(DeadlineExceededError);
    await later;
    expect(batches).toEqual([['soon', 'later'], ['later']]);
  });

  it('any other failure rejects the whole batch, as before', async () => {
    const commits = new GroupCommit<string>(() => {
      throw new Error('disk full');
    });
    const results = await Promise.allSettled([commits.append('a', expiringIn(5_000)), commits.append('b')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
