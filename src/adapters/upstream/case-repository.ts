import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleType,
  type IPolicy,
  retry,
  wrap,
} from 'cockatiel';
// The package's own entry by path: Bun answers a bare `undici` with its built-in stand-in,
// which has no Agent.close and no connection pool of its own.
import { Agent, request } from 'undici/index.js';
import type { ZodType } from 'zod';
import type { Crn } from '../../domain/crn.js';
import {
  LimitedAccessError,
  StoreUnavailableError,
  UpstreamFailedError,
  UpstreamTimeoutError,
} from '../../domain/errors.js';
import type {
  CommunityManager,
  HomeOfficeInterest,
  PersonalDetailsAndCircumstances,
  RiskPredictorScore,
} from '../../domain/types.js';
import type { CaseRepository, Held, ReadFor } from '../../ports/case-repository.js';
import type { UpstreamOutcome } from '../../ports/stores.js';
import type { OutgoingTracing } from '../../ports/tracing.js';
// The problem types of this service's own API, which an upstream instance of it answers with.
import { ProblemType } from '../http/problem-types.js';
import { callBudget } from '../shared/call-budget.js';
import { BodyRefused, boundedText, IDENTITY_ONLY } from './body-limit.js';
import { limitedAccessRefusal, problemOf } from './problem-answers.js';
import {
  type CaseResource,
  mismatchOf,
  NOT_THE_CASE,
  notTheCase,
  type UpstreamReading,
  upstreamReading,
} from './reading.js';

const UPSTREAM = 'case store upstream';

/** The log reasons of an answer that came but could not be read as what was asked: counted as `invalid-body`. */
const UNREADABLE_ANSWER: ReadonlySet<string> = new Set<string>([
  'invalid-body',
  'body-too-large',
  ...NOT_THE_CASE,
]);

/** Retried (within the total timeout): the upstream may answer the same GET next time. */
class Retryable extends Error {
  constructor(readonly outcome: UpstreamOutcome) {
    super(outcome);
  }
}
/** Counted by the breaker but not retried. */
class Fault extends Error {
  constructor(readonly outcome: UpstreamOutcome) {
    super(outcome);
  }
}

export interface UpstreamOptions {
  /** `https://host[:port][/base]`, no trailing slash needed. */
  readonly baseUrl: string;
  readonly connections: number;
  readonly timeoutMs: number;
  readonly retries: number;
  /** The most of one answer's body that is read (`UPSTREAM_MAX_BODY_BYTES`); a longer one is a 502. */
  readonly maxBodyBytes: number;
  /** The IANA zone of date-times sent without an offset (default `Europe/London`). */
  readonly timeZone?: string;
  readonly tls?: {
    readonly ca?: string | undefined;
    readonly cert?: string | undefined;
    readonly key?: string | undefined;
  };
  readonly apiKey?: string;
  /** Resolves the bearer token to send (static, or OAuth2 client credentials). */
  readonly bearer?: () => Promise<string>;
  readonly breaker?: { readonly failures: number; readonly halfOpenAfterMs: number };
  readonly observe?: (outcome: UpstreamOutcome, seconds: number) => void;
  /** A client span per attempt, and the trace context in its headers, when tracing is on. */
  readonly tracing?: OutgoingTracing;
}

type Answer<T> = { found: true; value: T } | { found: false; problemType: string };

/** The upstream decides limited access itself: what it answers is held with no rules of ours. */
const held = <T>(value: T): Held<T> => ({ value, limitedAccess: null });

/** A path as its route template, for a span name: `/case/{crn}/community-manager`, no query. */
const routeOf = (path: string) =>
  (path.split('?')[0] ?? '').replace(/^\/(case|v1\/persons)\/[^/]+/, '/$1/{crn}');

/**
 * The case repository read from the system of record over HTTP (`CASE_STORE=https://…`),
 * which speaks this service's own `/case/…` API.
 *
 * - undici keep-alive pool of `connections`; the crn path-encoded; the whole call, retries
 *   included, under `timeoutMs` (then 504).
 * - At most `retries` retries, on a refused or reset connection or a 502/503/504 only,
 *   with exponential back-off and jitter starting at 50 ms, never past the total timeout.
 * - A circuit breaker (cockatiel): after `failures` consecutive availability faults
 *   (connection, timeout, 5xx), calls fail at once with 503 for `halfOpenAfterMs`; then one
 *   probe is let through and closes it again if it succeeds.
 * - Bodies are read as the real services send them (`reading.ts`: absent fields null, local
 *   date-times given their offset, unknown fields dropped); what still does not fit, a wrong
 *   content type, or an unexpected status is a 502, logged with the field and the reason.
 *   404 is "not held", whatever its body; 401 and 403 are a 502 logged as our own
 *   misconfiguration, except a 403 `limited-access`. Nothing of the upstream's text
 *   reaches a client or a log, except that refusal's detail.
 * - Limited access is the upstream's to decide: the verified on-behalf-of token is relayed
 *   in `X-On-Behalf-Of`, and a 403 `limited-access` becomes this service's own (not
 *   retried, not counted by the breaker), with the upstream's detail (the case's message).
 */
export class UpstreamCaseRepository implements CaseRepository {
  private agent: Agent;
  private readonly policy: IPolicy;
  private readonly breaker;
  private readonly base: string;
  private readonly host: string;
  private readonly reading: UpstreamReading;

  constructor(private readonly options: UpstreamOptions) {
    this.reading = upstreamReading(options.timeZone ?? 'Europe/London');
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.host = new URL(this.base).host;
    this.agent = this.agentWith(options.tls);
    this.breaker = circuitBreaker(handleType(Retryable).orType(Fault), {
      halfOpenAfter: options.breaker?.halfOpenAfterMs ?? 5000,
      breaker: new ConsecutiveBreaker(options.breaker?.failures ?? 5),
    });
    const retrying = retry(handleType(Retryable), {
      maxAttempts: options.retries,
      backoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 400 }),
    });
    this.policy = wrap(retrying, this.breaker);
  }

  /** The breaker's state, for readiness: open means every call is being refused. */
  get circuitOpen(): boolean {
    return this.breaker.state === CircuitState.Open;
  }

  private agentWith(tls: UpstreamOptions['tls']): Agent {
    return new Agent({
      connections: this.options.connections,
      // HTTP/1.1 only, said rather than left to the default (undici 8 takes HTTP/2 when the
      // server offers it by ALPN): a pool of `connections` sockets, each answer on its own.
      allowH2: false,
      // Verification always on, whatever NODE_TLS_REJECT_UNAUTHORIZED says (decisions §20).
      connect: { timeout: this.options.timeoutMs, ...(tls ?? {}), rejectUnauthorized: true },
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      keepAliveTimeout: 10_000,
      // undici stops reading past this and destroys the connection, so it is never reused.
      maxResponseSize: this.options.maxBodyBytes,
    });
  }

  /**
   * New connections use these TLS files (a rotated client certificate, a new CA); the pool
   * in use finishes the calls it is making, then closes.
   */
  setTls(tls: UpstreamOptions['tls']): void {
    const previous = this.agent;
    this.agent = this.agentWith(tls);
    void previous.close().catch(() => {});
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  async findPersonalDetails(
    crn: Crn,
    readFor?: ReadFor,
  ): Promise<Held<PersonalDetailsAndCircumstances> | undefined> {
    const answer = await this.getCase(
      crn,
      `/case/${encodeURIComponent(crn.value)}`,
      this.reading.personalDetails,
      readFor,
    );
    return answer.found ? held(answer.value) : undefined;
  }

  async findHomeOfficeInterest(crn: Crn, readFor?: ReadFor): Promise<Held<HomeOfficeInterest> | undefined> {
    const answer = await this.getCase(
      crn,
      `/case/${encodeURIComponent(crn.value)}/home-office-interest`,
      this.reading.homeOfficeInterest,
      readFor,
    );
    return answer.found ? held(answer.value) : undefined;
  }

  async findCommunityManager(
    crn: Crn,
    readFor?: ReadFor,
  ): Promise<Held<{ communityManager: CommunityManager | null }> | undefined> {
    const answer = await this.getCase(
      crn,
      `/case/${encodeURIComponent(crn.value)}/community-manager`,
      this.reading.communityManager,
      readFor,
    );
    if (!answer.found) {
      // The case is held, without an active manager, when the upstream says so; when its
      // 404 does not say which (the probation service's `{ status, message }`), the case
      // itself tells: a held case with no manager is not an unknown crn.
      if (answer.problemType === ProblemType.communityManagerNotFound)
        return held({ communityManager: null });
      if (answer.problemType === ProblemType.caseNotFound) return undefined;
      const theCase = await this.findPersonalDetails(crn, readFor);
      return theCase === undefined ? undefined : held({ communityManager: null });
    }
    return held({ communityManager: answer.value });
  }

  /** Every page, in the order the upstream serves them (the use case orders them by instant). */
  async findRiskScores(crn: Crn, readFor?: ReadFor): Promise<Held<RiskPredictorScore[]> | undefined> {
    const scores: RiskPredictorScore[] = [];
    for (let page = 1; page <= 1000; page++) {
      const answer = await this.getCase(
        crn,
        `/v1/persons/${encodeURIComponent(crn.value)}/risks/scores?page=${page}&perPage=100`,
        this.reading.riskScoresPage,
        readFor,
      );
      if (!answer.found) return undefined;
      scores.push(...answer.value.data);
      if (answer.value.isLastPage) return held(scores);
    }
    throw new UpstreamFailedError(UPSTREAM, 'too-many-pages');
  }

  /** A resource of `crn`'s case: its answer checked to be that case's before it is read (`notTheCase`). */
  private getCase<T>(
    crn: Crn,
    path: string,
    resource: CaseResource<T>,
    readFor?: ReadFor,
  ): Promise<Answer<T>> {
    return this.get(path, resource.schema, readFor, (body) => notTheCase(body, crn.value, resource.fields));
  }

  /** `check` refuses a parsed body before `schema` reads it, with the log's reason. */
  private async get<T>(
    path: string,
    schema: ZodType<T>,
    readFor: ReadFor | undefined,
    check: (body: unknown) => string | undefined,
  ): Promise<Answer<T>> {
    const started = performance.now();
    // Its own timeout, and the request's deadline: the first to pass gives the call up.
    const budget = callBudget(this.options.timeoutMs, readFor?.deadline);
    const deadline = budget.signal;
    const done = (outcome: UpstreamOutcome) =>
      this.options.observe?.(outcome, (performance.now() - started) / 1000);
    try {
      const answer = await this.policy.execute(({ signal }) => {
        const tracing = this.options.tracing;
        if (tracing === undefined) return this.attempt(path, schema, check, signal, readFor);
        return tracing.outgoing(`GET ${routeOf(path)}`, { 'server.address': this.host }, () =>
          this.attempt(path, schema, check, signal, readFor, tracing),
        );
      }, deadline);
      done(answer.found ? 'ok' : 'not-found');
      return answer;
    } catch (error) {
      if (error instanceof LimitedAccessError) {
        done('limited-access');
        throw error;
      }
      if (error instanceof BrokenCircuitError) {
        done('circuit-open');
        throw new StoreUnavailableError(UPSTREAM, 'circuit-open');
      }
      if (deadline.aborted || (error as Retryable).outcome === 'timeout') {
        done('timeout');
        throw new UpstreamTimeoutError(UPSTREAM);
      }
      if (error instanceof Retryable || error instanceof Fault) {
        done(error.outcome);
        throw new UpstreamFailedError(UPSTREAM, error.outcome);
      }
      if (error instanceof UpstreamFailedError) {
        done(UNREADABLE_ANSWER.has(error.logLabel) ? 'invalid-body' : 'refused-by-upstream');
        throw error;
      }
      done('connection');
      throw new UpstreamFailedError(UPSTREAM, 'connection');
    } finally {
      budget.end();
    }
  }

  private async attempt<T>(
    path: string,
    schema: ZodType<T>,
    check: (body: unknown) => string | undefined,
    signal: AbortSignal,
    readFor: ReadFor | undefined,
    tracing?: OutgoingTracing,
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...IDENTITY_ONLY };
    tracing?.inject(headers);
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    // The verified user's own token, relayed: the system of record decides limited access.
    if (readFor?.onBehalfOf) headers['x-on-behalf-of'] = readFor.onBehalfOf.token;
    if (this.options.bearer) headers.authorization = `Bearer ${await this.options.bearer()}`;
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(`${this.base}${path}`, { dispatcher: this.agent, headers, signal });
    } catch (error) {
      if (signal.aborted) throw new Fault('timeout');
      const code = (error as { code?: string }).code ?? '';
      if (/TIMEOUT/.test(code)) throw new Fault('timeout');
      // Refused or reset before an answer: safe to ask again (a GET).
      throw new Retryable('connection');
    }
    const { statusCode } = response;
    const type = String(response.headers['content-type'] ?? '');
    let text: string;
    try {
      text = await boundedText(response, this.options.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyRefused) throw new UpstreamFailedError(UPSTREAM, error.label, error.mismatch);
      if (signal.aborted) throw new Fault('timeout');
      throw new Retryable('connection');
    }
    if (statusCode === 502 || statusCode === 503 || statusCode === 504) throw new Retryable('5xx');
    if (statusCode >= 500) throw new Fault('5xx');
    if (statusCode === 403) {
      const problem = problemOf(text);
      if (problem.type === ProblemType.limitedAccess) throw limitedAccessRefusal(problem.detail);
    }
    if (statusCode === 401 || statusCode === 403) {
      throw new UpstreamFailedError(UPSTREAM, `refused-our-credentials-${statusCode}`);
    }
    if (statusCode === 404) {
      const problemType = problemOf(text).type;
      // "No resource at this path" is not "no such case": the base URL is wrong, and
      // answering 404 for every crn would be a wrong answer, so it is a 502.
      if (problemType === ProblemType.notFound) {
        throw new UpstreamFailedError(UPSTREAM, 'path-not-served');
      }
      return { found: false, problemType };
    }
    if (statusCode !== 200) {
      throw new UpstreamFailedError(UPSTREAM, 'invalid-body', {
        field: '(status)',
        reason: 'not 200, 404 or 5xx',
      });
    }
    if (!/^application\/json\b/i.test(type)) {
      throw new UpstreamFailedError(UPSTREAM, 'invalid-body', {
        field: '(body)',
        reason: 'not application/json',
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UpstreamFailedError(UPSTREAM, 'invalid-body', { field: '(body)', reason: 'not JSON' });
    }
    const refused = check(parsed);
    if (refused !== undefined) throw new UpstreamFailedError(UPSTREAM, refused);
    const checked = schema.safeParse(parsed);
    if (!checked.success) throw new UpstreamFailedError(UPSTREAM, 'invalid-body', mismatchOf(checked.error));
    return { found: true, value: checked.data };
  }
}
