import { pino } from 'pino';

/** What one access-log line holds (the HTTP adapter's `AccessEntry`, as this adapter writes it). */
export interface AccessLine {
  readonly requestId: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly ms: number;
}

/**
 * Each request's access-log line, written to the logger's own destination in the form pino
 * writes it — `{"level":30,"time":…,"service":…,"requestId":…,"method":…,"route":…,
 * "status":…,"ms":…,"msg":"request"}` — but by one template instead of pino's general
 * serialiser, which measured at about a seventh of the app's own CPU per request
 * (`node bench/app-loop.mjs`). Strings are JSON-escaped as pino would. The lines of one
 * event-loop turn reach the destination in one write at the end of the turn (the destination
 * itself buffers 4 KiB and writes asynchronously, so this delays nothing that was not
 * delayed). Nothing is written when the level is above info.
 */
export function accessLogOf(logger: pino.Logger): ((entry: AccessLine) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return () => {};
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | { write(line: string): unknown }
    | undefined;
  const bindings = (logger as unknown as Record<symbol, unknown>)[pino.symbols.chindingsSym];
  // Anything unexpected (a transport, a custom formatter): leave the line to pino.
  if (stream === undefined || typeof stream.write !== 'function' || typeof bindings !== 'string') {
    return undefined;
  }
  const level = logger.levels.values.info;
  // The lines of one event-loop turn go to the destination in one write at its end.
  let pending = '';
  const flush = () => {
    const lines = pending;
    pending = '';
    stream.write(lines);
  };
  return (entry) => {
    if (pending === '') setImmediate(flush);
    pending += `{"level":${level},"time":${Date.now()}${bindings},"requestId":${JSON.stringify(entry.requestId)},"method":${JSON.stringify(entry.method)},"route":${JSON.stringify(entry.route)},"status":${entry.status},"ms":${entry.ms},"msg":"request"}\n`;
  };
}

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stdout, written asynchronously through a 4 KiB buffer so the
 * request path never waits on a write. The buffer is flushed every second and at shutdown.
 */
export function createLogger(level: pino.LevelWithSilent): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const logger = pino({ level, base: { service: 'case-read-service' } }, destination);
  setInterval(() => logger.flush(), 1000).unref();
  return logger;
}
