import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamCaseRepository } from '../../../src/adapters/upstream/case-repository.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../../src/adapters/upstream/settings.js';
import { Crn } from '../../../src/domain/crn.js';
import {
  StoreUnavailableError,
  UpstreamFailedError,
  UpstreamTimeoutError,
} from '../../../src/domain/errors.js';
import { fixtureCases } from '../../support/fixtures.js';
import { freePort } from '../../support/ports.js';

/** A loopback stub of the upstream whose behaviour each test sets. */
type Behaviour = (req: IncomingMessage, res: ServerResponse, call: number) => void;
let behaviour: Behaviour = () => {};
let calls = 0;
let stub: Server;
let base: string;
const X = fixtureCases().find((c) => c.crn === 'X123456');
const json = (res: ServerResponse, status: number, body: unknown, type = 'application/json') => {
  res.writeHead(status, { 'content-type': type });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  stub = createServer((req, res) => {
    calls++;
    behaviour(req, res, calls);
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
});
afterAll(async () => {
  stub.closeAllConnections();
  await new Promise((resolve) => stub.close(resolve));
});

const TIMEOUT = 600;
const opened: UpstreamCaseRepository[] = [];
const observed: string[] = [];
function repository(overrides: Partial<ConstructorParameters<typeof UpstreamCaseRepository>[0]> = {}) {
  const repo = new UpstreamCaseRepository({
    baseUrl: base,
    connections: 4,
    timeoutMs: TIMEOUT,
    retries: 2,
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    breaker: { failures: 5, halfOpenAfterMs: 300 },
    observe: (outcome) => observed.push(outcome),
    ...overrides,
  });
  opened.push(repo);
  return repo;
}
afterEach(async () => {
  calls = 0;
  observed.length = 0;
  stub.closeAllConnections();
  for (const r of opened.splice(0)) await r.close();
});

const crn = Crn.parse('X123456');
/** Runs one read and says how it ended and how long it took. */
async function timed(read: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

describe('the upstream case store against a misbehaving upstream', () => {
  it('slow but within the timeout: answered', async () => {
    behaviour = (_req, res) => setTimeout(() => json(res, 200, X?.homeOfficeInterest), 200);
    expect((await repository().findHomeOfficeInterest(crn))?.value).toStrictEqual(X?.homeOfficeInterest);
    expect(observed).toEqual(['ok']);
  });

  it('hanging: UpstreamTimeoutError (504) within the total timeout, retries included', async () => {
    behaviour = () => {};
    const { error, ms } = await timed(() => repository().findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(ms).toBeLessThan(TIMEOUT + 400);
    expect(observed).toEqual(['timeout']);
  });

  it('500: UpstreamFailedError (502), not retried', async () => {
    behaviour = (_req, res) => json(res, 500, { message: 'upstream stack trace with secrets' });
    const { error } = await timed(() => repository().findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect((error as Error).message).not.toMatch(/stack|secrets/);
    expect(calls).toBe(1);
  });

  it('503 then 200: retried, answered', async () => {
    behaviour = (_req, res, call) =>
      call === 1 ? json(res, 503, {}) : json(res, 200, X?.homeOfficeInterest);
    expect((await repository().findHomeOfficeInterest(crn))?.value).toStrictEqual(X?.homeOfficeInterest);
    expect(calls).toBe(2);
  });

  it('503 every time: 1 + UPSTREAM_RETRIES attempts, then UpstreamFailedError (502)', async () => {
    behaviour = (_req, res) => json(res, 503, {});
    const { error } = await timed(() => repository().findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect(calls).toBe(3);
  });

  it.each([
    [
      'garbage JSON',
      (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"exists": tru');
      },
    ],
    ['a wrong content type', (res: ServerResponse) => json(res, 200, X?.homeOfficeInterest, 'text/html')],
    ['a body of the wrong shape', (res: ServerResponse) => json(res, 200, { exists: 'yes' })],
    ['401 (our credentials refused)', (res: ServerResponse) => json(res, 401, {})],
    ['403 (our credentials refused)', (res: ServerResponse) => json(res, 403, {})],
    [
      'a 404 for the path itself',
      (res: ServerResponse) => json(res, 404, { type: 'urn:case-read:problem:not-found' }),
    ],
  ])('%s: UpstreamFailedError (502), nothing of the upstream in the message', async (_label, answer) => {
    behaviour = (_req, res) => answer(res);
    const { error } = await timed(() => repository().findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect((error as Error).message).toBe('the case store upstream failed; try again later');
    expect(calls).toBe(1);
  });

  it('a connection reset: retried, then UpstreamFailedError (502)', async () => {
    behaviour = (req) => req.socket.destroy();
    const { error } = await timed(() => repository().findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect(calls).toBe(3);
  });

  it('a refused connection: UpstreamFailedError (502) within the timeout', async () => {
    // A port that was free a moment ago: nothing listens there.
    const closed = await freePort();
    const { error, ms } = await timed(() =>
      repository({ baseUrl: `http://127.0.0.1:${closed}` }).findHomeOfficeInterest(crn),
    );
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect(ms).toBeLessThan(TIMEOUT + 400);
  });

  it('404 case-not-found is "not held"; community-manager-not-found is "held, no manager"', async () => {
    behaviour = (req, res) =>
      json(res, 404, {
        type: req.url?.endsWith('community-manager')
          ? 'urn:case-read:problem:community-manager-not-found'
          : 'urn:case-read:problem:case-not-found',
      });
    const repo = repository();
    expect(await repo.findPersonalDetails(crn)).toBeUndefined();
    expect((await repo.findCommunityManager(crn))?.value).toStrictEqual({ communityManager: null });
  });

  it('the breaker opens after 5 consecutive faults, fails at once with 503, and closes after a good probe', async () => {
    behaviour = (_req, res) => json(res, 500, {});
    const repo = repository({ retries: 0 });
    for (let i = 0; i < 5; i++) {
      expect(await repo.findHomeOfficeInterest(crn).catch((e: unknown) => e)).toBeInstanceOf(
        UpstreamFailedError,
      );
    }
    expect(repo.circuitOpen).toBe(true);
    const before = calls;
    const { error, ms } = await timed(() => repo.findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(calls).toBe(before);
    expect(ms).toBeLessThan(50);
    expect(observed.at(-1)).toBe('circuit-open');
    // Half-open after 300 ms: one probe goes through, succeeds, and closes the circuit.
    behaviour = (_req, res) => json(res, 200, X?.homeOfficeInterest);
    await new Promise((r) => setTimeout(r, 350));
    expect((await repo.findHomeOfficeInterest(crn))?.value).toStrictEqual(X?.homeOfficeInterest);
    expect(repo.circuitOpen).toBe(false);
  });

  it('sends the API key and the bearer, and path-encodes the crn', async () => {
    let seen: IncomingMessage | undefined;
    behaviour = (req, res) => {
      seen = req;
      json(res, 200, X?.homeOfficeInterest);
    };
    await repository({ apiKey: 'k-1', bearer: async () => 't-1' }).findHomeOfficeInterest(crn);
    expect(seen?.headers['x-api-key']).toBe('k-1');
    expect(seen?.headers.authorization).toBe('Bearer t-1');
    expect(seen?.url).toBe('/case/X123456/home-office-interest');
  });
});

describe('an answer that is not the case asked for', () => {
  const manager = { name: { forename: 'Sam', surname: 'Example' }, pdu: 'North Wales' };
  it.each([
    ['a health page', 'findPersonalDetails', { status: 'UP' }, 'unrecognised-answer'],
    ['an error body', 'findPersonalDetails', { error: 'Bad Gateway', path: '/case' }, 'unrecognised-answer'],
    ["another person's case", 'findPersonalDetails', { crn: 'Y654321', disabilities: [] }, 'crn-mismatch'],
    [
      "another person's home-office interest",
      'findHomeOfficeInterest',
      { crn: 'Y654321', exists: true },
      'crn-mismatch',
    ],
    [
      "another person's community manager",
      'findCommunityManager',
      { crn: 'Y654321', communityManager: manager },
      'crn-mismatch',
    ],
    ['a crn that is no string', 'findPersonalDetails', { crn: 7, disabilities: [] }, 'crn-mismatch'],
    ['a crn of null', 'findPersonalDetails', { crn: null, disabilities: [] }, 'crn-mismatch'],
    // Each read, each answer naming no crn or another (decisions §20).
    ...(
      ['findPersonalDetails', 'findHomeOfficeInterest', 'findCommunityManager', 'findRiskScores'] as const
    ).flatMap(
      (read) =>
        [
          ['a crn of null beside a health page', read, { crn: null, status: 'UP' }, 'crn-mismatch'],
          ['a crn that is a number', read, { crn: 123 }, 'crn-mismatch'],
          ['another crn', read, { crn: 'OTHER1' }, 'crn-mismatch'],
          ['the crn in lower case', read, { crn: 'x123456' }, 'crn-mismatch'],
          ['a health page', read, { status: 'UP' }, 'unrecognised-answer'],
        ] as const,
    ),
  ] as const)(
    '%s, read by %s: UpstreamFailedError (502), not retried, counted as invalid-body',
    async (_what, read, body, label) => {
      behaviour = (_req, res) => json(res, 200, body);
      const { error } = await timed(() => repository()[read](crn));
      expect(error).toBeInstanceOf(UpstreamFailedError);
      expect(error).toMatchObject({ logLabel: label });
      expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toMatch(
        /Y654321|OTHER1|x123456|\bUP\b|Bad Gateway|123/,
      );
      expect(calls).toBe(1);
      expect(observed).toEqual(['invalid-body']);
    },
  );

  it.each([
    ['{}', {}],
    ['null fields left out, its own crn', { crn: 'X123456' }],
    ['its crn and fields unknown here', { crn: 'X123456', riskFlags: ['new'] }],
  ])('%s: a case with nothing held', async (_what, body) => {
    behaviour = (_req, res) => json(res, 200, body);
    expect((await repository().findPersonalDetails(crn))?.value).toStrictEqual({
      preferredLanguage: null,
      personalCircumstances: [],
      disabilities: [],
      offenderPersonalityDisorder: null,
    });
  });

  it('the case asked for, under its own crn: read as ever, by each read', async () => {
    behaviour = (req, res) => {
      const path = req.url ?? '';
      if (path.endsWith('/community-manager')) json(res, 200, { crn: 'X123456', communityManager: manager });
      else if (path.endsWith('/home-office-interest')) json(res, 200, { crn: 'X123456', exists: true });
      else if (path.includes('/risks/scores'))
        json(res, 200, { crn: 'X123456', data: [], pagination: { isLastPage: true } });
      else json(res, 200, { crn: 'X123456', disabilities: [] });
    };
    const repo = repository();
    expect((await repo.findCommunityManager(crn))?.value.communityManager).toMatchObject({
      pdu: 'North Wales',
    });
    expect((await repo.findHomeOfficeInterest(crn))?.value).toStrictEqual({ exists: true, notes: null });
    expect((await repo.findRiskScores(crn))?.value).toStrictEqual([]);
    expect((await repo.findPersonalDetails(crn))?.value.disabilities).toStrictEqual([]);
  });

  it.each([
    ['findHomeOfficeInterest', 'exists', 'expected boolean'],
    ['findCommunityManager', 'crn', 'expected string'],
    ['findRiskScores', 'pagination', 'expected object'],
  ] as const)(
    '{} read by %s: not a case with nothing held, since a field it must have is absent (502)',
    async (read, field, reason) => {
      behaviour = (_req, res) => json(res, 200, {});
      const { error } = await timed(() => repository()[read](crn));
      expect(error).toMatchObject({ logLabel: 'invalid-body', mismatch: { field, reason } });
    },
  );
});

describe('the upstream store as serve opens it', () => {
  it('readiness fails while the circuit is open, and passes again once it closes', async () => {
    const { upstreamStores } = await import('../../../src/adapters/upstream/store-kind.js');
    const { testContext } = await import('../../support/stores.js');
    const store = await upstreamStores.cases?.open(base, {
      ...testContext,
      settings: {
        connections: 2,
        timeoutMs: TIMEOUT,
        retries: 0,
        timeZone: 'Europe/London',
        maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      },
    });
    if (!store) throw new Error('no upstream store');
    try {
      behaviour = (_req, res) => json(res, 200, X?.homeOfficeInterest);
      await expect(store.ping()).resolves.toBeUndefined();
      behaviour = (_req, res) => json(res, 503, {});
      for (let i = 0; i < 5; i++) await store.value.findHomeOfficeInterest(crn).catch(() => {});
      await expect(store.ping()).rejects.toThrow(/circuit is open/);
      expect(store.description).toMatch(/upstream; no authentication; timeout 600 ms, 0 retries/);
    } finally {
      await store.close();
    }
  });
});

describe('the upstream refusing limited access', () => {
  const refuse = (detail: unknown) => (_req: IncomingMessage, res: ServerResponse) =>
    json(res, 403, { type: 'urn:case-read:problem:limited-access', detail }, 'application/problem+json');

  it('is a LimitedAccessError with its detail: not retried, not counted by the breaker, not a failure', async () => {
    behaviour = refuse('You are excluded from viewing this case.');
    const repo = repository();
    for (let i = 0; i < 7; i++) {
      await expect(repo.findHomeOfficeInterest(crn)).rejects.toMatchObject({
        code: 'LIMITED_ACCESS',
        message: 'You are excluded from viewing this case.',
      });
    }
    // Seven refusals, seven calls: none retried, and the breaker (5 failures) never opened.
    expect(calls).toBe(7);
    expect(observed).toEqual(Array(7).fill('limited-access'));
  });

  it('passes on a detail only when it is a plain sentence; otherwise the generic one', async () => {
    for (const detail of ['x'.repeat(501), 'line\nbreak', '', 42, null]) {
      behaviour = refuse(detail);
      await expect(repository().findHomeOfficeInterest(crn)).rejects.toMatchObject({
        code: 'LIMITED_ACCESS',
        message: 'This case is restricted to named users.',
      });
    }
  });

  it('relays the verified token, and nothing without a user; any other 403 is still a 502', async () => {
    const seen: (string | undefined)[] = [];
    behaviour = (req, res) => {
      seen.push(req.headers['x-on-behalf-of'] as string | undefined);
      json(res, 403, { type: 'urn:case-read:problem:permission-denied' }, 'application/problem+json');
    };
    const readFor = { onBehalfOf: { email: 'officer.b@probation.example', token: 'the.user.token' } };
    await expect(repository().findPersonalDetails(crn, readFor)).rejects.toBeInstanceOf(UpstreamFailedError);
    await expect(repository().findPersonalDetails(crn, { onBehalfOf: null })).rejects.toBeInstanceOf(
      UpstreamFailedError,
    );
    expect(seen).toEqual(['the.user.token', undefined]);
  });
});

describe('what is read of an upstream answer (UPSTREAM_MAX_BODY_BYTES)', () => {
  const LIMIT = 64 * 1024;
  const MIB = Buffer.alloc(1024 * 1024, 0x20);
  /** Writes MiB after MiB until the client goes away or `mib` have been sent; counts what went out. */
  const stream = (res: ServerResponse, mib: number, sent: { bytes: number; closed: boolean }) => {
    res.on('close', () => {
      sent.closed = true;
    });
    const more = () => {
      while (sent.bytes < mib * MIB.length && !res.destroyed) {
        sent.bytes += MIB.length;
        if (!res.write(MIB)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end();
    };
    more();
  };
  /** The remote ports the stub saw, one per connection it was asked on. */
  const ports: number[] = [];
  const limited = () => repository({ maxBodyBytes: LIMIT });
  afterEach(() => {
    ports.length = 0;
  });

  it('an endless body: 502 body-too-large once the limit is read, not retried, the connection not reused', async () => {
    const sent = { bytes: 0, closed: false };
    behaviour = (req, res, call) => {
      ports.push(req.socket.remotePort ?? 0);
      if (call > 1) return json(res, 200, X?.homeOfficeInterest);
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length said
      res.write('{"padding":"');
      stream(res, 400, sent);
    };
    const repo = limited();
    const { error, ms } = await timed(() => repo.findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamFailedError);
    expect(error).toMatchObject({
      logLabel: 'body-too-large',
      mismatch: {
        field: '(body)',
        reason: `longer than UPSTREAM_MAX_BODY_BYTES (${LIMIT}); reading stopped there`,
      },
    });
    expect(ms).toBeLessThan(TIMEOUT);
    expect(calls).toBe(1);
    expect(observed).toEqual(['invalid-body']);
    await expect.poll(() => sent.closed).toBe(true);
    // The upstream got to send at most what the sockets' buffers held, not its 400 MiB.
    expect(sent.bytes).toBeLessThan(400 * MIB.length);
    // The next read is answered on a new connection.
    expect((await repo.findHomeOfficeInterest(crn))?.value).toStrictEqual(X?.homeOfficeInterest);
    expect(ports).toHaveLength(2);
    expect(ports[1]).not.toBe(ports[0]);
  });

  it('a Content-Length over the limit: refused before reading', async () => {
    const sent = { bytes: 0, closed: false };
    behaviour = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(400 * MIB.length) });
      stream(res, 400, sent);
    };
    const { error } = await timed(() => limited().findHomeOfficeInterest(crn));
    expect(error).toMatchObject({
      logLabel: 'body-too-large',
      mismatch: {
        reason: `Content-Length ${400 * MIB.length} over UPSTREAM_MAX_BODY_BYTES (${LIMIT}); not read`,
      },
    });
    expect(calls).toBe(1);
    await expect.poll(() => sent.closed).toBe(true);
  });

  it('a lying Content-Length (under the limit, then far more): 502, the connection not reused', async () => {
    const sent = { bytes: 0, closed: false };
    behaviour = (req, res, call) => {
      ports.push(req.socket.remotePort ?? 0);
      if (call > 1) return json(res, 200, X?.homeOfficeInterest);
      // Written by hand on the socket: Node's server would refuse to send more than it said.
      req.socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
      const more = () => {
        while (sent.bytes < 400 * MIB.length && !req.socket.destroyed) {
          sent.bytes += MIB.length;
          if (!req.socket.write(MIB)) return void req.socket.once('drain', more);
        }
      };
      req.socket.on('close', () => {
        sent.closed = true;
      });
      more();
    };
    const repo = limited();
    const { error } = await timed(() => repo.findHomeOfficeInterest(crn));
    expect(error).toBeInstanceOf(UpstreamFailedError);
    await expect.poll(() => sent.closed).toBe(true);
    expect(sent.bytes).toBeLessThan(400 * MIB.length);
    expect((await repo.findHomeOfficeInterest(crn))?.value).toStrictEqual(X?.homeOfficeInterest);
    expect(ports[ports.length - 1]).not.toBe(ports[0]);
  });

  it('a gzip-encoded body: asked for identity, never inflated, 502 invalid-body', async () => {
    const { gzipSync } = await import('node:zlib');
    const asked: (string | undefined)[] = [];
    behaviour = (req, res) => {
      asked.push(req.headers['accept-encoding']);
      const body = gzipSync(JSON.stringify(X?.homeOfficeInterest));
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(body.length),
      });
      res.end(body);
    };
    const { error } = await timed(() => limited().findHomeOfficeInterest(crn));
    expect(error).toMatchObject({
      logLabel: 'invalid-body',
      mismatch: { field: '(body)', reason: 'Content-Encoding gzip, not asked for; not read' },
    });
    expect(asked).toEqual(['identity']);
  });

  it('a body of exactly the limit is read', async () => {
    const body = JSON.stringify(X?.homeOfficeInterest);
    behaviour = (_req, res) => json(res, 200, X?.homeOfficeInterest);
    const repo = repository({ maxBodyBytes: Buffer.byteLength(body) });
    expect((await repo.findHomeOfficeInterest(crn))?.value).toStrictEqual(X?.homeOfficeInterest);
  });
});
