/**
 * The witness's HTTP interface: `POST /add-checkpoint` (C2SP tlog-witness v1.0.0, its
 * submission prefix the server's root), `GET /health` and `GET /metrics`; nothing else. The
 * listener (server.ts) hands each request here with its body read up to a bound; the
 * answer is plain data for it to write.
 */
import { cosignatureTime } from '../../tlog/cosignature.js';
import { TLOG_SIZE_CONTENT_TYPE, tlogSizeBody } from '../../tlog/witness-protocol.js';
import { addCheckpoint, type WitnessAnswer, type WitnessParts } from './add-checkpoint.js';
import type { WitnessMetrics } from './metrics.js';

/** The most an add-checkpoint body may hold: 63 proof lines and a checkpoint with a hundred signatures fit many times over. */
export const MAX_BODY_BYTES = 64 * 1024;

/** A request as the listener hands it over: the body already read, or too large to have been. */
export interface WitnessRequest {
  readonly method: string;
  /** The path, without the query. */
  readonly path: string;
  /** The body's bytes, or `too-large` when it was over {@link MAX_BODY_BYTES} (not read to its end). */
  readonly body: Uint8Array | 'too-large';
}

/** What the listener writes back. */
export interface WitnessResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A structured log line: level, fields (never a key), message. */
export type WitnessLog = (
  level: 'info' | 'warn' | 'error',
  fields: Readonly<Record<string, unknown>>,
  message: string,
) => void;

const TEXT = 'text/plain; charset=utf-8';
const text = (status: number, body: string, headers: Record<string, string> = {}): WitnessResponse => ({
  status,
  headers: { 'content-type': TEXT, ...headers },
  body: body.endsWith('\n') ? body : `${body}\n`,
});

/** The answer's HTTP form: 200 the cosignature line, 409 the size held as `text/x.tlog.size`, else the reason. */
function responseOf(answer: WitnessAnswer): WitnessResponse {
  switch (answer.status) {
    case 200:
      return text(200, answer.cosignature);
    case 409:
      return {
        status: 409,
        headers: { 'content-type': TLOG_SIZE_CONTENT_TYPE },
        body: tlogSizeBody(answer.held),
      };
    default:
      return text(answer.status, answer.reason);
  }
}

/** What each answer is logged as: a refusal of a known log's checkpoint may be evidence of its misbehaviour. */
function logAnswer(log: WitnessLog, answer: WitnessAnswer): void {
  const origin = answer.origin !== undefined ? { origin: answer.origin } : {};
  switch (answer.status) {
    case 200:
      log('info', { ...origin, status: 200, size: answer.size }, 'checkpoint cosigned');
      return;
    case 409:
      log('info', { ...origin, status: 409, held: answer.held }, 'old size is not the one held');
      return;
    case 422:
      log(
        'error',
        { ...origin, status: 422, reason: answer.reason, checkpoint: answer.evidence },
        'checkpoint refused as inconsistent: kept here as possible evidence of the log misbehaving',
      );
      return;
    default:
      log('warn', { ...origin, status: answer.status, reason: answer.reason }, 'checkpoint refused');
  }
}

/** The request handler of a witness made of `parts`. */
export function witnessHandler(
  parts: WitnessParts,
  metrics: WitnessMetrics,
  log: WitnessLog,
): (request: WitnessRequest) => Promise<WitnessResponse> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const submit = async (body: WitnessRequest['body']): Promise<WitnessResponse> => {
    if (body === 'too-large') return text(413, `a body is at most ${MAX_BODY_BYTES} bytes`);
    let textBody: string;
    try {
      textBody = decoder.decode(body);
    } catch {
      return text(400, 'the body is not UTF-8 text');
    }
    let answer: WitnessAnswer;
    try {
      answer = await addCheckpoint(parts, textBody);
    } catch (error) {
      log('error', { err: { message: (error as Error).message } }, 'witness state unavailable');
      return text(503, "the witness's state cannot be read or written; try again later", {
        'retry-after': '5',
      });
    }
    logAnswer(log, answer);
    if (answer.status === 200)
      metrics.cosigned(
        answer.origin,
        answer.size,
        cosignatureTime(answer.cosignature.slice(0, -1)) ?? parts.now(),
      );
    return responseOf(answer);
  };
  return async (request) => {
    switch (request.path) {
      case '/add-checkpoint': {
        if (request.method !== 'POST') return text(405, 'add-checkpoint takes POST', { allow: 'POST' });
        const response = await submit(request.body);
        metrics.answered(response.status);
        return response;
      }
      case '/health':
        if (request.method !== 'GET' && request.method !== 'HEAD')
          return text(405, 'GET', { allow: 'GET, HEAD' });
        return text(200, 'ok');
      case '/metrics': {
        if (request.method !== 'GET') return text(405, 'GET', { allow: 'GET' });
        const { contentType, text: body } = await metrics.exposition();
        return { status: 200, headers: { 'content-type': contentType }, body };
      }
      default:
        return text(404, 'not found: this witness answers POST /add-checkpoint');
    }
  };
}
