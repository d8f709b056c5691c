import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditCheckpointing } from '../../../src/app/audit/checkpointing.js';
import {
  type AuditCheckpoint,
  type ChainHead,
  checkpointSignedText,
} from '../../../src/domain/audit/checkpoint.js';

/** A store whose head the test moves, and which can be made to refuse checkpoints. */
class FakeStore {
  headSeq = 0;
  saved: AuditCheckpoint[] = [];
  refuse = false;
  flushed = 0;
  async head(): Promise<ChainHead> {
    return { seq: this.headSeq, hash: this.headSeq.toString(16).padStart(64, '0') };
  }
  async newestCheckpoint() {
    return this.saved.reduce<AuditCheckpoint | undefined>(
      (n, c) => (n === undefined || c.seq > n.seq ? c : n),
      undefined,
    );
  }
  async saveCheckpoint(c: AuditCheckpoint) {
    if (this.refuse) throw new Error('disk full');
    this.saved.push(c);
  }
  async *checkpoints() {
    yield* this.saved;
  }
  async addCosignatures() {}
  async witnessSizes() {
    return new Map<string, number>();
  }
  async saveWitnessSize() {}
  async flush() {
    this.flushed++;
  }
  async growTree() {
    return { size: this.headSeq, root: new Uint8Array(32).fill(this.headSeq), head: await this.head() };
  }
}

let store: FakeStore;
let out: {
  signed: AuditCheckpoint[];
  failed: string[];
  observed: [number, number | undefined][];
  contradicted: number;
};
let checkpointing: AuditCheckpointing;

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

beforeEach(() => {
  vi.useFakeTimers();
  store = new FakeStore();
  out = { signed: [], failed: [], observed: [], contradicted: 0 };
  checkpointing = new AuditCheckpointing({
    store,
    signer: {
      keyId: 'key-1',
      sign: (text) => Buffer.from(text).toString('base64url').slice(-16),
      note: {
        name: 'test.invalid/log',
        keyId: 1,
        publicKey: new Uint8Array(32),
        sign: () => new Uint8Array(64),
      },
    },
    everyRecords: 3,
    everySeconds: 60,
    now: () => new Date(Date.now()),
    out: {
      signed: (c) => out.signed.push(c),
      observed: (head, newest) => out.observed.push([head.seq, newest?.seq]),
      failed: (reason) => out.failed.push(reason),
      contradicted: () => {
        out.contradicted++;
      },
    },
  });
});
afterEach(() => vi.useRealTimers());

/** `n` records stored by this instance. */
function append(n: number) {
  for (let i = 0; i < n; i++) {
    store.headSeq++;
    checkpointing.appended();
  }
}

describe('AuditCheckpointing', () => {
  it('signs the head every N records this instance stores, not before', async () => {
    checkpointing.start();
    await settle();
    expect(out.signed).toEqual([]);
    append(2);
    await settle();
    expect(store.saved).toEqual([]);
    append(1);
    await settle();
    expect(store.saved.map((c) => c.seq)).toEqual([3]);
    const [c] = store.saved;
    expect(c).toMatchObject({ seq: 3, head: (3).toString(16).padStart(64, '0'), keyId: 'key-1' });
    expect(c?.signature).toBe(
      Buffer.from(checkpointSignedText({ seq: 3, head: c?.head ?? '', time: c?.time ?? '', keyId: 'key-1' }))
        .toString('base64url')
        .slice(-16),
    );
    expect(out.signed).toEqual(store.saved);
    await checkpointing.stop();
  });

  it('signs at start a chain that grew while nothing signed it (a killed instance, a key newly set)', async () => {
    store.headSeq = 7;
    checkpointing.start();
    await settle();
    expect(store.saved.map((c) => c.seq)).toEqual([7]);
    await checkpointing.stop();
    // Nothing new at shutdown: no second checkpoint of the same head.
    expect(store.saved).toHaveLength(1);
  });

  it('signs nothing once the trail was continued under another origin (audit continue while it ran)', async () => {
    checkpointing.start();
    append(3);
    await settle();
    expect(store.saved.map((c) => c.seq)).toEqual([3]);
    // `audit continue` stored the first checkpoint of the new log.
    store.headSeq = 4;
    store.saved.push({
      seq: 4,
      head: (4).toString(16).padStart(64, '0'),
      time: new Date().toISOString(),
      keyId: 'key-1',
      signature: 'x',
      note: `test.invalid/log-2\n4\n${Buffer.alloc(32).toString('base64')}\n\n— test.invalid/log-2 AAAAAQ==\n`,
    });
    append(3);
    await settle();
    expect(store.saved.map((c) => c.seq)).toEqual([3, 4]);
    expect(out.failed.at(-1)).toMatch(/names the log test\.invalid\/log-2, not test\.invalid\/log/);
    await checkpointing.stop();
  });

  it('signs on the timer only when the chain grew (records from any instance)', async () => {
    checkpointing.start();
    await settle();
    store.headSeq = 2; // another instance's records
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.saved.map((c) => c.seq)).toEqual([2]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.saved).toHaveLength(1);
    expect(out.observed.at(-1)).toEqual([2, 2]);
    await checkpointing.stop();
  });

  it('a checkpoint that cannot be stored is reported and tried again after 1, 2, 4 seconds', async () => {
    checkpointing.start();
    store.refuse = true;
    append(3);
    await settle();
    expect(out.failed).toEqual(['disk full']);
    // It was logged all the same: a copy outside the store.
    expect(out.signed).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(out.failed).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1999);
    expect(out.failed).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(out.failed).toHaveLength(3);
    store.refuse = false;
    await vi.advanceTimersByTimeAsync(4000);
    expect(store.saved.map((c) => c.seq)).toEqual([3]);
    await checkpointing.stop();
  });

  it('appended() never throws nor waits, whatever the store does', async () => {
    store.head = () => Promise.reject(new Error('engine down'));
    checkpointing.start();
    expect(() => append(10)).not.toThrow();
    await settle();
    expect(out.failed.every((reason) => reason === 'engine down')).toBe(true);
    expect(out.failed.length).toBeGreaterThan(0);
    await checkpointing.stop();
  });

  it('at shutdown: writes what is pending, then signs the last head', async () => {
    checkpointing.start();
    await settle();
    append(2);
    await checkpointing.stop();
    expect(store.flushed).toBe(1);
    expect(store.saved.map((c) => c.seq)).toEqual([2]);
    // Stopped: no more timers.
    append(5);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(store.saved).toHaveLength(1);
  });

  it('says so when the stored chain ends before its newest checkpoint', async () => {
    checkpointing.start();
    append(3);
    await settle();
    store.headSeq = 1; // records removed behind the service's back
    await vi.advanceTimersByTimeAsync(60_000);
    expect(out.contradicted).toBe(1);
    await checkpointing.stop();
  });
});
