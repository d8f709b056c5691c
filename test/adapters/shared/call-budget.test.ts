import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { callBudget } from '../../../src/adapters/shared/call-budget.js';

const deadlineIn = (ms: number) => ({ expiresAt: performance.now() + ms });

describe('a call budget: its own timeout or the request deadline, whichever is sooner', () => {
  it('ends at its own timeout when there is no deadline, as a TimeoutError', async () => {
    const budget = callBudget(40);
    expect(budget.signal.aborted).toBe(false);
    await sleep(120);
    expect(budget.signal.aborted).toBe(true);
    expect((budget.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(budget.byDeadline).toBe(false);
  });

  it('ends at its own timeout when the deadline is later', async () => {
    const budget = callBudget(40, deadlineIn(10_000));
    await sleep(120);
    expect(budget.signal.aborted).toBe(true);
    expect(budget.byDeadline).toBe(false);
    budget.end();
  });

  it('ends at the deadline when that is sooner, and says so', async () => {
    const budget = callBudget(10_000, deadlineIn(40));
    expect(budget.byDeadline).toBe(false);
    await sleep(120);
    expect(budget.signal.aborted).toBe(true);
    expect(budget.byDeadline).toBe(true);
    budget.end();
  });

  it('is over at once when the deadline has passed', () => {
    const budget = callBudget(10_000, deadlineIn(-5));
    expect(budget.signal.aborted).toBe(true);
    expect(budget.byDeadline).toBe(true);
  });

  it('leaves nothing behind once ended: the signal never aborts', async () => {
    const budget = callBudget(30, deadlineIn(30));
    budget.end();
    await sleep(100);
    expect(budget.signal.aborted).toBe(false);
  });

  it('gives each call a signal of its own', () => {
    const deadline = deadlineIn(10_000);
    const [one, two] = [callBudget(1000, deadline), callBudget(1000, deadline)];
    expect(one.signal).not.toBe(two.signal);
    one.end();
    two.end();
  });
});
