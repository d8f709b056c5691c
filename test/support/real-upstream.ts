import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CaseRecord, LevelledScore, RiskPredictorScore } from '../../src/domain/types.js';

/** One answer as a real service gave it: served for `path` (its pathname), whatever the query. */
export interface RecordedAnswer {
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

const RECORDED_DIR = fileURLToPath(new URL('../../fixtures/upstream/', import.meta.url));

/** The recorded bodies in `fixtures/upstream/`, by file name without `.json`. */
export function recordedAnswers(): Record<string, RecordedAnswer> {
  const answers: Record<string, RecordedAnswer> = {};
  for (const file of readdirSync(RECORDED_DIR).filter((f) => f.endsWith('.json'))) {
    answers[file.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(RECORDED_DIR, file), 'utf8'));
  }
  return answers;
}

/** The body of the recorded answer `name` (a file of `fixtures/upstream/`, without `.json`). */
export function recordedBody(name: string): unknown {
  const answer = recordedAnswers()[name];
  if (answer === undefined) throw new Error(`no recorded answer ${name} in fixtures/upstream`);
  return answer.body;
}

/** The probation service's 404 body, `{ status, message }`, from the recorded one. */
const NOT_FOUND = (): unknown => recordedBody('probation-not-found');

/** `value` with every null-valued property left out, as the probation service serialises. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/** An instant as the gateway writes it: the wall clock in `zone`, no offset. */
function localIn(zone: string, iso: string): string {
  // Sweden's format is ISO 8601's, with a space for the T.
  return new Date(iso).toLocaleString('sv-SE', { timeZone: zone, hourCycle: 'h23' }).replace(' ', 'T');
}

export interface RealShapes {
  /**
   * Risk scores as the public gateway sends them: levels only, `completedDate` the wall clock
   * in this zone with no offset. Without it, scores and dates are sent as held.
   */
  readonly gatewayIn?: string;
}

function gatewayScore(score: RiskPredictorScore, zone: string | undefined): Record<string, unknown> {
  const level = (s: LevelledScore) => (zone ? { scoreLevel: s.scoreLevel } : s);
  return {
    ...score,
    completedDate: zone ? localIn(zone, score.completedDate) : score.completedDate,
    assessmentVersion: 1,
    generalPredictor: level(score.generalPredictor),
    violencePredictor: level(score.violencePredictor),
    groupReconviction: level(score.groupReconviction),
    riskOfSeriousRecidivism: level(score.riskOfSeriousRecidivism),
    sexualPredictor: zone
      ? {
          indecentScoreLevel: score.sexualPredictor.indecentScoreLevel,
          contactScoreLevel: score.sexualPredictor.contactScoreLevel,
        }
      : score.sexualPredictor,
  };
}

/** A limited case refused to a reader acting as itself, as this service's problem says it. */
function limitedFor(record: CaseRecord, now: number): string | undefined {
  const rules = record.limitedAccess;
  if (rules === null) return undefined;
  const active = (until: string | null) => until === null || Date.parse(until) > now;
  if (rules.exclusions.some((e) => active(e.until))) return rules.exclusionMessage ?? 'Excluded.';
  if (rules.restriction !== null && active(rules.restriction.until))
    return rules.restrictionMessage ?? 'Restricted.';
  return undefined;
}

/** The answer the real services would give for `path` from `record`, in their shapes. */
function answerFrom(record: CaseRecord, rest: string, query: URLSearchParams, shapes: RealShapes) {
  if (rest === '')
    return {
      status: 200,
      body: { ...record.personalDetails, crn: record.crn, lastUpdated: '2026-01-16T16:22:54' },
    };
  if (rest === '/home-office-interest')
    return { status: 200, body: { crn: record.crn, ...record.homeOfficeInterest } };
  if (rest === '/community-manager') {
    return record.communityManager === null
      ? { status: 404, body: NOT_FOUND() }
      : {
          status: 200,
          body: {
            crn: record.crn,
            communityManager: { code: 'N07A123', ...record.communityManager, unallocated: false },
          },
        };
  }
  if (rest === '/risks/scores') {
    const page = Number(query.get('page') ?? '1');
    const perPage = Number(query.get('perPage') ?? '10');
    const all = record.riskScores;
    const data = all
      .slice((page - 1) * perPage, page * perPage)
      .map((s) => gatewayScore(s, shapes.gatewayIn));
    const totalPages = Math.ceil(all.length / perPage);
    return {
      status: 200,
      body: {
        data,
        pagination: {
          isLastPage: page >= totalPages,
          count: data.length,
          page,
          perPage,
          totalCount: all.length,
          totalPages,
        },
      },
    };
  }
  return undefined;
}

export interface RealUpstream {
  readonly url: string;
  /** The paths asked for, in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

/**
 * A stand-in for the system of record that answers as the real services do: `records` in
 * their shapes (null fields left out, fields this contract lacks added, 404 as
 * `{ status, message }`, with `gatewayIn` the risk scores as the gateway sends them), and
 * `recorded` answers served as they are. Over HTTPS when given a certificate.
 */
export async function startRealUpstream(
  options: {
    records?: readonly CaseRecord[];
    recorded?: readonly RecordedAnswer[];
    shapes?: RealShapes;
    tls?: { cert: string; key: string };
  } = {},
): Promise<RealUpstream> {
  const byCrn = new Map((options.records ?? []).map((r) => [r.crn, r]));
  const recorded = new Map((options.recorded ?? []).map((a) => [a.path, a]));
  const asked: string[] = [];
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(withoutNulls(body)));
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://upstream.test');
    asked.push(url.pathname);
    const replay = recorded.get(url.pathname);
    if (replay !== undefined) return send(res, replay.status, replay.body);
    const m = /^\/(?:case|v1\/persons)\/([^/]+)(.*)$/.exec(url.pathname);
    const record = m ? byCrn.get(decodeURIComponent(m[1] ?? '')) : undefined;
    const answer = record && answerFrom(record, m?.[2] ?? '', url.searchParams, options.shapes ?? {});
    if (record === undefined || answer === undefined) return send(res, 404, NOT_FOUND());
    const refused = req.headers['x-on-behalf-of'] === undefined ? limitedFor(record, Date.now()) : undefined;
    if (refused !== undefined) {
      return send(res, 403, { type: 'urn:case-read:problem:limited-access', status: 403, detail: refused });
    }
    return send(res, answer.status, answer.body);
  };
  const server = options.tls ? createHttpsServer(options.tls, handle) : createHttpServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://${options.tls ? 'localhost' : '127.0.0.1'}:${port}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
