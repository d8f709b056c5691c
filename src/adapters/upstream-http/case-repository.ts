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
import { GENERIC_RESTRICTION_MESSAGE } from '../../domain/access/limited-access.js';
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
// The wire format is one module, shared by the service's own routes and this client.
import {
  CommunityOffenderManagerAccepted,
  HomeOfficeInterestAccepted,
  PersonalDetailsAndCircumstancesAccepted,
  RiskScoresPageSchema,
} from '../http/schemas.js';

const UPSTREAM = 'case store upstream';

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

/** Absent optional fields become null and absent lists [], as the port's contract asks. */
const orNull = <T>(value: T | undefined | null): T | null => value ?? null;

/** The upstream decides limited access itself: what it answers is held with no rules of ours. */
const held = <T>(value: T): Held<T> => ({ value, limitedAccess: null });

const LIMITED_ACCESS_TYPE = 'urn:case-read:problem:limited-access';
/** The longest upstream detail passed on to a client; a longer one is replaced by the generic sentence. */
const MAX_DETAIL = 500;

/** The problem body's `type` and `detail`, when the text is one; empty strings otherwise. */
function problemOf(text: string): { type: string; detail: string } {
  try {
    const body = JSON.parse(text) as { type?: unknown; detail?: unknown };
    return {
      type: typeof body.type === 'string' ? body.type : '',
      detail: typeof body.detail === 'string' ? body.detail : '',
    };
  } catch {
    return { type: '', detail: '' };
  }
}

/**
 * The upstream's limited-access refusal as this service's own: its detail is passed on (it
 * is the case's message, meant for the user), unless it is empty, too long or holds a
 * control character, when the generic sentence is sent instead.
 */
function limitedAccessRefusal(detail: string): LimitedAccessError {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  const usable = detail.trim() !== '' && detail.length <= MAX_DETAIL && !/[\u0000-\u001f\u007f]/.test(detail);
  return new LimitedAccessError('refused-upstream', usable ? detail : GENERIC_RESTRICTION_MESSAGE);
}

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
 * - Bodies are checked with the same zod schemas as the service's own responses: anything
 *   else, a wrong content type, or an unexpected status is a 502. 404 is "not held"; 401
 *   and 403 are a 502 logged as our own misconfiguration, except a 403 `limited-access`.
 *   Nothing of the upstream's text reaches a client or a log, except that refusal's detail.
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

  constructor(private readonly options: UpstreamOptions) {
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
      connect: { timeout: this.options.timeoutMs, ...(tls ?? {}) },
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      keepAliveTimeout: 10_000,
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
    const answer = await this.get(
      `/case/${encodeURIComponent(crn.value)}`,
      PersonalDetailsAndCircumstancesAccepted,
      readFor,
    );
    if (!answer.found) return undefined;
    const d = answer.value;
    return held({
      preferredLanguage: orNull(d.preferredLanguage),
      personalCircumstances: d.personalCircumstances ?? [],
      disabilities: d.disabilities ?? [],
      offenderPersonalityDisorder: orNull(d.offenderPersonalityDisorder),
    } as PersonalDetailsAndCircumstances);
  }

  async findHomeOfficeInterest(crn: Crn, readFor?: ReadFor): Promise<Held<HomeOfficeInterest> | undefined> {
    const answer = await this.get(
      `/case/${encodeURIComponent(crn.value)}/home-office-interest`,
      HomeOfficeInterestAccepted,
      readFor,
    );
    return answer.found
      ? held({ exists: answer.value.exists, notes: orNull(answer.value.notes) })
      : undefined;
  }

  async findCommunityManager(
    crn: Crn,
    readFor?: ReadFor,
  ): Promise<Held<{ communityManager: CommunityManager | null }> | undefined> {
    const answer = await this.get(
      `/case/${encodeURIComponent(crn.value)}/community-manager`,
      CommunityOffenderManagerAccepted,
      readFor,
    );
    if (!answer.found) {
      // The case is held, without an active manager: the upstream says which 404 it is.
      return answer.problemType.endsWith('community-manager-not-found')
        ? held({ communityManager: null })
        : undefined;
    }
    const m = answer.value.communityManager;
    return held({
      communityManager: {
        name: { forename: m.name.forename, middleName: orNull(m.name.middleName), surname: m.name.surname },
        pdu: m.pdu,
        jobRole: orNull(m.jobRole),
        emailAddress: orNull(m.emailAddress),
        officeName: orNull(m.officeName),
        teamPhoneNumber: orNull(m.teamPhoneNumber),
      },
    });
  }

  /** Every page, in the order the upstream serves them (newest first). */
  async findRiskScores(crn: Crn, readFor?: ReadFor): Promise<Held<RiskPredictorScore[]> | undefined> {
    const scores: RiskPredictorScore[] = [];
    for (let page = 1; page <= 1000; page++) {
      const answer = await this.get(
        `/v1/persons/${encodeURIComponent(crn.value)}/risks/scores?page=${page}&perPage=100`,
        RiskScoresPageSchema,
        readFor,
      );
      if (!answer.found) return undefined;
      scores.push(...(answer.value.data as RiskPredictorScore[]));
      if (answer.value.pagination.isLastPage) return held(scores);
    }
    throw new UpstreamFailedError(UPSTREAM, 'too-many-pages');
  }

  private async get<T>(path: string, schema: ZodType<T>, readFor?: ReadFor): Promise<Answer<T>> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const done = (outcome: UpstreamOutcome) =>
      this.options.observe?.(outcome, (performance.now() - started) / 1000);
    try {
      const answer = await this.policy.execute(({ signal }) => {
        const tracing = this.options.tracing;
        if (tracing === undefined) return this.attempt(path, schema, signal, readFor);
        return tracing.outgoing(`GET ${routeOf(path)}`, { 'server.address': this.host }, () =>
          this.attempt(path, schema, signal, readFor, tracing),
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
        done(error.logLabel === 'invalid-body' ? 'invalid-body' : 'refused-by-upstream');
        throw error;
      }
      done('connection');
      throw new UpstreamFailedError(UPSTREAM, 'connection');
    }
  }

  private async attempt<T>(
    path: string,
    schema: ZodType<T>,
    signal: AbortSignal,
    readFor: ReadFor | undefined,
    tracing?: OutgoingTracing,
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
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
      text = await response.body.text();
    } catch {
      if (signal.aborted) throw new Fault('timeout');
      throw new Retryable('connection');
    }
    if (statusCode === 502 || statusCode === 503 || statusCode === 504) throw new Retryable('5xx');
    if (statusCode >= 500) throw new Fault('5xx');
    if (statusCode === 403) {
      const problem = problemOf(text);
      if (problem.type === LIMITED_ACCESS_TYPE) throw limitedAccessRefusal(problem.detail);
    }
    if (statusCode === 401 || statusCode === 403) {
      throw new UpstreamFailedError(UPSTREAM, `refused-our-credentials-${statusCode}`);
    }
    if (statusCode === 404) {
      const problemType = problemOf(text).type;
      // "No resource at this path" is not "no such case": the base URL is wrong, and
      // answering 404 for every crn would be a wrong answer, so it is a 502.
      if (problemType === 'urn:case-read:problem:not-found') {
        throw new UpstreamFailedError(UPSTREAM, 'path-not-served');
      }
      return { found: false, problemType };
    }
    if (statusCode !== 200 || !/^application\/json\b/i.test(type)) {
      throw new UpstreamFailedError(UPSTREAM, 'invalid-body');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UpstreamFailedError(UPSTREAM, 'invalid-body');
    }
    const checked = schema.safeParse(parsed);
    if (!checked.success) throw new UpstreamFailedError(UPSTREAM, 'invalid-body');
    return { found: true, value: checked.data };
  }
}
