import { describe, expect, it } from 'vitest';
import { batchedFetch } from '../../../src/adapters/tls-listener/batched-fetch.js';

const request = (path: string) => new Request(`https://localhost${path}`);

describe('batchedFetch', () => {
  it('starts the requests of one pass together at its end, in arrival order, each with its own answer', async () => {
    const started: string[] = [];
    const fetch = batchedFetch((req: Request, env: { n: number }) => {
      started.push(`${new URL(req.url).pathname}:${env.n}`);
      return new Response(String(env.n));
    });
    const answers = [
      fetch(request('/a'), { n: 1 }),
      fetch(request('/b'), { n: 2 }),
      fetch(request('/c'), { n: 3 }),
    ];
    // Nothing has started while the pass (this synchronous code) goes on.
    expect(started).toEqual([]);
    await Promise.resolve();
    expect(started).toEqual([]);
    const bodies = await Promise.all(answers.map(async (a) => (await a).text()));
    expect(started).toEqual(['/a:1', '/b:2', '/c:3']);
    expect(bodies).toEqual(['1', '2', '3']);
  });

  it('a request arriving after a batch has started goes in the next batch', async () => {
    const order: string[] = [];
    const fetch = batchedFetch(async (req: Request) => {
      order.push(new URL(req.url).pathname);
      return new Response('ok');
    });
    const first = fetch(request('/first'), {});
    await first;
    const second = fetch(request('/second'), {});
    await second;
    expect(order).toEqual(['/first', '/second']);
  });

  it('passes on a handler that throws or rejects, and the others of its batch are still answered', async () => {
    const fetch = batchedFetch((req: Request) => {
      const path = new URL(req.url).pathname;
      if (path === '/throws') throw new Error('thrown');
      if (path === '/rejects') return Promise.reject(new Error('rejected'));
      return new Response('fine');
    });
    const results = await Promise.allSettled([
      fetch(request('/throws'), {}),
      fetch(request('/rejects'), {}),
      fetch(request('/fine'), {}),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'answered'))).toEqual([
      'thrown',
      'rejected',
      'answered',
    ]);
  });
});
