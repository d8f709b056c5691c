import type { Agent } from 'node:https';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../../src/adapters/http/deadline.js';
import { InMemoryCaseRepository } from '../../../src/adapters/memory/case-repository.js';
import type { AuditRecord } from '../../../src/domain/audit/record.js';
import { UpstreamTimeoutError } from '../../../src/domain/errors.js';
import type { AuditWriter } from '../../../src/ports/audit-log.js';
import type { CaseRepository } from '../../../src/ports/case-repository.js';
import { type Deadline, remainingMs } from '../../../src/ports/deadline.js';
import { fixtureCases } from '../../support/fixtures.js';
import { consumerAgent, httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';

/**
 * Deadlines and overload (decisions §11) through the real listener and the whole perimeter,
 * with engines made slow in process: a case store that holds one crn's reads until released,
 * an audit writer that holds its appends until released.
 */
const DEADLINE_MS = 300;
/** What "at once" and "a small margin" mean here: far below any engine's own timeout. */
const MARGIN_MS = 250;

let pki: TestPki;
let token: string;

/** The fixtures, with reads of `X123456`'s home office interest held until `release`. */
class HeldCases {
  private readonly inner = new InMemoryCaseRepository(fixtureCases());
  private waiting: (() => void)[] = [];
  held = 0;
  readonly repository: CaseRepository = Object.assign(Object.create(this.inner), {
    findHomeOfficeInterest: async (crn: Parameters<CaseRepository['findHomeOfficeInterest']>[0]) => {
      if (crn.value !== 'X123456') return this.inner.findHomeOfficeInterest(crn);
      this.held++;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      return this.inner.findHomeOfficeInterest(crn);
    },
  });
  release(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/** Keeps every record appended; while `hold` is set, appends wait on it. */
class HeldAudit implements AuditWriter {
  readonly records: AuditRecord[] = [];
  readonly deadlines: (Deadline | undefined)[] = [];
  hold: Promise<void> | undefined;
  async append(record: AuditRecord, deadline?: Deadline): Promise<void> {
    this.deadlines.push(deadline);
    if (this.hold) await this.hold;
    this.records.push(record);
  }
}

beforeAll(async () => {
  pki = await makeTestPki();
  token = await mintTestToken(pki, 'reader');
});
afterAll(() => pki?.cleanup());

async function start(options: Parameters<typeof startTestService>[1]) {
  const service = await startTestService(pki, options);
  await service.directory.saveClient(
    AccessMother.client('reader', { permissions: ['getCase', 'getHomeOfficeInterest'] }),
  );
  const { key } = await service.issueKey('reader');
  const reader = await pki.client('reader');
  const ask = async (path: string, agent?: Agent) => {
    const started = performance.now();
    const answer = await httpsRequest(`${service.url}${path}`, {
      ca: pki.ca.certPem,
      cert: reader.certPem,
      key: reader.keyPem,
      headers: { 'x-api-key': key, authorization: `Bearer ${token}` },
      ...(agent ? { agent } : {}),
    });
    return { ...answer, ms: performance.now() - started };
  };
  return { service, ask };
}

describe('a request held by a slow engine is answered at its deadline', () => {
  let service: RunningTestService | undefined;
  const cases = new HeldCases();
  afterEach(async () => {
    cases.release();
    await service?.close();
    service = undefined;
  });

  it('the case store: 503 store-unavailable with Retry-After, recorded as such, the metric told', async () => {
    const audit = new HeldAudit();
    const exceeded: Engine[] = [];
    const started = await start({
      repository: cases.repository,
      audit,
      deadlines: { requestMs: DEADLINE_MS, maxInFlight: 16 },
      deadlineExceeded: (engine) => exceeded.push(engine),
    });
    service = started.service;
    const answer = await started.ask('/case/X123456/home-office-interest');
    expect(answer.status).toBe(503);
    expect(answer.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    expect(answer.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expect(answer.headers['retry-after']).toBe('1');
    expect((answer.json() as { type: string }).type).toBe('urn:case-read:problem:store-unavailable');
    expect(exceeded).toEqual(['caseStore']);
    // Recorded without holding the answer: the 503 it was, never a 200.
    await expect
      .poll(() => audit.records.map((r) => [r.status, r.problem]))
      .toEqual([[503, 'store-unavailable']]);
    // Other requests were not held.
    expect((await started.ask('/case/A000001/home-office-interest')).status).toBe(200);
  });

  it('an upstream case store: 504 upstream-timeout', async () => {
    const started = await start({
      repository: cases.repository,
      deadlines: { requestMs: DEADLINE_MS, maxInFlight: 16, upstream: new Set<Engine>(['caseStore']) },
    });
    service = started.service;
    const answer = await started.ask('/case/X123456/home-office-interest');
    expect(answer.status).toBe(504);
    expect(answer.headers['retry-after']).toBe('1');
    expect((answer.json() as { type: string }).type).toBe('urn:case-read:problem:upstream-timeout');
    expect(answer.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
  });

  it('an upstream that gives up in the very instant of the deadline: 504 upstream-timeout, not the audit store 503; recorded', async () => {
    // As the upstream store's call budget does, the call ends when the request's time does;
    // here the store holds the event loop until then, so its answer comes with no time left
    // and before the deadline's own timer has run. The audit append after it has no time.
    const inner = new InMemoryCaseRepository(fixtureCases());
    const repository: CaseRepository = Object.assign(Object.create(inner), {
      findHomeOfficeInterest: async (_crn: unknown, readFor?: { deadline?: Deadline }) => {
        const deadline = readFor?.deadline;
        while (deadline !== undefined && remainingMs(deadline) > 0) {
          // the upstream's wait, to the end of the deadline
        }
        throw new UpstreamTimeoutError('case store upstream');
      },
    });
    // A store that takes a moment from each append, as one that commits in batches does.
    const audit = new (class extends HeldAudit {
      override async append(record: AuditRecord, deadline?: Deadline): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return super.append(record, deadline);
      }
    })();
    const exceeded: Engine[] = [];
    const started = await start({
      repository,
      audit,
      deadlines: { requestMs: DEADLINE_MS, maxInFlight: 16, upstream: new Set<Engine>(['caseStore']) },
      deadlineExceeded: (engine) => exceeded.push(engine),
    });
    service = started.service;
    const answer = await started.ask('/case/X123456/home-office-interest');
    expect([answer.status, (answer.json() as { type: string }).type]).toEqual([
      504,
      'urn:case-read:problem:upstream-timeout',
    ]);
    // Answered at the deadline, the refusal kept: counted as a deadline passed, on the case store.
    expect(exceeded).toEqual(['caseStore']);
    await expect
      .poll(() => audit.records.map((r) => [r.status, r.problem]))
      .toEqual([[504, 'upstream-timeout']]);
  });

  it('a keep-alive connection whose request took the whole deadline stays usable, and is not closed afterwards', async () => {
    const started = await start({
      repository: cases.repository,
      deadlines: { requestMs: DEADLINE_MS, maxInFlight: 16 },
    });
    service = started.service;
    const agent = consumerAgent({ maxSockets: 1 });
    try {
      const slow = await started.ask('/case/X123456/home-office-interest', agent);
      expect(slow.status).toBe(503);
      const next = await started.ask('/case/A000001/home-office-interest', agent);
      expect([next.status, next.reusedSocket]).toEqual([200, true]);
      // Well past the first request's deadline: nothing of it closes the connection.
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 2));
      const later = await started.ask('/case/A000001', agent);
      expect([later.status, later.reusedSocket]).toEqual([200, true]);
    } finally {
      agent.destroy();
    }
  });
});

describe('an audit append that misses the deadline', () => {
  let service: RunningTestService | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('withholds the answer (503); stored later after all, a second record says it was withheld', async () => {
    const audit = new HeldAudit();
    let release: () => void = () => {};
    audit.hold = new Promise((resolve) => {
      release = resolve;
    });
    const exceeded: Engine[] = [];
    const started = await start({
      audit,
      deadlines: { requestMs: DEADLINE_MS, maxInFlight: 16 },
      deadlineExceeded: (engine) => exceeded.push(engine),
    });
    service = started.service;
    const answer = await started.ask('/case/X123456');
    expect(answer.status).toBe(503);
    expect(answer.text).not.toContain('preferredLanguage');
    expect(answer.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expect(exceeded).toEqual(['auditStore']);
    // The store was handed the request's deadline.
    expect(audit.deadlines[0]?.expiresAt).toBeGreaterThan(0);
    audit.hold = undefined;
    release();
    await expect.poll(() => audit.records.length).toBe(2);
    const [first, second] = audit.records;
    expect(first).toMatchObject({ status: 200, problem: null });
    expect(second).toMatchObject({ requestId: first?.requestId, status: 503, problem: 'answer-withheld' });
  });

  it('a store that leaves the record unwritten at the deadline: 503, and the 503 is recorded instead', async () => {
    const appended: AuditRecord[] = [];
    const audit: AuditWriter = {
      // As group commit does: a record whose deadline passed before its write began is never written.
      append: (record, deadline) => {
        appended.push(record);
        return new Promise((_resolve, reject) => {
          // Just after its deadline; a record written with none (the 503's own) at once.
          const wait = deadline === undefined ? 0 : deadline.expiresAt - performance.now() + 10;
          setTimeout(reject, Math.max(0, wait), new Error('not written'));
        });
      },
    };
    const started = await start({ audit, deadlines: { requestMs: DEADLINE_MS, maxInFlight: 16 } });
    service = started.service;
    const answer = await started.ask('/case/X123456');
    expect(answer.status).toBe(503);
    await expect
      .poll(() => appended.map((r) => [r.status, r.problem]))
      .toEqual([
        [200, null],
        [503, 'store-unavailable'],
      ]);
  });
});

describe('overload: at most maxInFlight wait on engines', () => {
  it('one more is refused at once with 503 overloaded and Retry-After: 1, costing no engine call, not audited', async () => {
    const cases = new HeldCases();
    const audit = new HeldAudit();
    let overloaded = 0;
    const { service, ask } = await start({
      repository: cases.repository,
      audit,
      deadlines: { requestMs: 2_000, maxInFlight: 3 },
      overloaded: () => overloaded++,
    });
    try {
      const held = [1, 2, 3].map(() => ask('/case/X123456/home-office-interest'));
      await expect.poll(() => cases.held).toBe(3);
      const refused = await Promise.all([1, 2, 3, 4, 5].map(() => ask('/case/A000001')));
      for (const answer of refused) {
        expect(answer.status).toBe(503);
        expect(answer.headers['retry-after']).toBe('1');
        expect((answer.json() as { type: string }).type).toBe('urn:case-read:problem:overloaded');
        expect(answer.ms).toBeLessThan(MARGIN_MS * 2);
      }
      expect(overloaded).toBe(5);
      // No engine call for them: the held ones are the only reads, and none was audited.
      expect(cases.held).toBe(3);
      expect(audit.records).toEqual([]);
      cases.release();
      expect((await Promise.all(held)).map((a) => a.status)).toEqual([200, 200, 200]);
      // Their places are free again.
      expect((await ask('/case/A000001')).status).toBe(200);
    } finally {
      cases.release();
      await service.close();
    }
  });
});
