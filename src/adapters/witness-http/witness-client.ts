// The package's own entry by path: Bun answers a bare `undici` with its built-in stand-in,
// which lacks the pool options (as in src/adapters/upstream).
import { Agent, request } from 'undici/index.js';
import type { WitnessAnswer, WitnessClient } from '../../ports/witnesses.js';
import { parseTlogSize, TLOG_SIZE_CONTENT_TYPE } from '../../tlog/witness-protocol.js';

/** The most of a witness's answer that is read: a few cosignature lines, or a short refusal. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** How much of a refusal's body is kept for the log line: printable ASCII only. */
const DETAIL_CHARS = 200;

const detailOf = (text: string): string =>
  text
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, DETAIL_CHARS);

/**
 * The witnesses' HTTP client (C2SP tlog-witness v1.0.0): one keep-alive pool for all of them,
 * TLS verified against the system's CAs, or `ca` when given (a witness behind a private CA).
 * Redirects are not followed; an answer over 64 KiB is cut off and counts as unreachable.
 */
export function httpWitnessClient(options: { readonly ca?: string | undefined } = {}): WitnessClient {
  const agent = new Agent({
    // HTTP/1.1 only, as the upstream's pool (said: undici 8 takes HTTP/2 when offered).
    allowH2: false,
    maxResponseSize: MAX_ANSWER_BYTES,
    connect: { rejectUnauthorized: true, ...(options.ca === undefined ? {} : { ca: options.ca }) },
  });
  return {
    async addCheckpoint(prefix, body, signal): Promise<WitnessAnswer> {
      const url = `${prefix.replace(/\/+$/, '')}/add-checkpoint`;
      try {
        const answer = await request(url, {
          method: 'POST',
          dispatcher: agent,
          body,
          headers: { 'content-type': 'text/plain; charset=utf-8', 'accept-encoding': 'identity' },
          signal,
        });
        const text = await answer.body.text();
        const status = answer.statusCode;
        if (status === 200) return { kind: 'cosigned', body: text };
        if (status === 409) {
          const type = String(answer.headers['content-type'] ?? '')
            .split(';')[0]
            ?.trim()
            .toLowerCase();
          const size = type === TLOG_SIZE_CONTENT_TYPE ? parseTlogSize(text) : undefined;
          if (size !== undefined) return { kind: 'conflict', size };
          return {
            kind: 'refused',
            status,
            detail: `409 without a ${TLOG_SIZE_CONTENT_TYPE} size: ${detailOf(text)}`,
          };
        }
        if (status >= 500) return { kind: 'unreachable', reason: `HTTP ${status}` };
        return { kind: 'refused', status, detail: detailOf(text) };
      } catch (error) {
        const e = error as Error & { code?: string };
        const reason = signal.aborted
          ? `no answer in time (${signal.reason instanceof Error ? signal.reason.name : 'aborted'})`
          : `${e.code ?? e.name}: ${e.message}`.slice(0, DETAIL_CHARS);
        return { kind: 'unreachable', reason };
      }
    },
    close: () => agent.close(),
  };
}
