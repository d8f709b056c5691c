import type { CertificateInUse } from '../ports/stores.js';
import { ConfigError } from './config-error.js';

/**
 * Certificates that change without a restart (decisions §10). Each source is a set of TLS
 * files used together (the listener's certificate, key, client CA and CRL; the upstream's
 * client certificate and CA). A set is reloaded on SIGHUP, and when its files' contents
 * or modes change on disk: read every `intervalMs`, which sees an in-place write and the
 * symlink swap of a mounted Kubernetes secret alike, on every runtime (and a key made
 * readable by others with the same contents: refused and counted now, not found by the next
 * restart). A change is loaded once it has read the same on two reads in a row, so a file
 * caught half-written is not tried. A set that cannot be used is refused with a log line and
 * a count, and the one in use stays; the same bad contents are not tried again until they
 * change (or SIGHUP).
 *
 * Nothing here blocks the event loop (decisions §20): the files are read at each poll
 * without blocking ({@link FileLooks}: a FIFO put in a key's place is seen as one, never
 * waited on), a set is reloaded by its source's own asynchronous read, and one poll or
 * reload runs at a time, a tick of the timer that finds one running skipped.
 */

/** A certificate in use, named as the expiry metric names it. */
export interface NamedCertificate extends CertificateInUse {
  /** `server`, `client-ca` or `upstream-client`. */
  readonly certificate: string;
}

export interface TlsSource {
  /** What the failure metric and the log line call it: `server` or `upstream-client`. */
  readonly name: string;
  readonly files: readonly string[];
  /**
   * Reads the files, checks them and uses them for new connections; throws (or rejects),
   * keeping the set in use, when they are not usable. Returns the certificates now in use.
   */
  reload(): readonly NamedCertificate[] | Promise<readonly NamedCertificate[]>;
}

export interface TlsReloadEvents {
  reloaded(source: TlsSource, certificates: readonly NamedCertificate[], trigger: 'SIGHUP' | 'file'): void;
  failed(source: TlsSource, reason: string, trigger: 'SIGHUP' | 'file'): void;
}

/**
 * How the watch looks at a file: a string that changes when its mode or contents do, or
 * that says why it cannot be used (missing, a FIFO, a directory). Never waits on a FIFO.
 */
export interface FileLooks {
  /** Once, when the watch starts: what the files are now. */
  now(path: string): string;
  /** At each poll: without blocking the event loop. */
  read(path: string): Promise<string>;
}

/** Why a set was refused: a configuration problem as it is named (`TLS_KEY: …`), else the error's message. */
const reasonOf = (error: unknown): string =>
  error instanceof ConfigError ? error.problems.join('; ') : (error as Error).message;

export interface TlsWatch {
  /** Reloads every set now (SIGHUP); resolves once it has been tried. */
  reloadAll(): Promise<void>;
  /** Reads the files once, as the timer does (for tests and for a caller that knows); resolves when done. */
  poll(): Promise<void>;
  stop(): void;
}

export function watchTls(
  sources: readonly TlsSource[],
  intervalMs: number,
  events: TlsReloadEvents,
  looks: FileLooks,
): TlsWatch {
  const lookAt = async (files: readonly string[]): Promise<string> =>
    (await Promise.all(files.map((file) => looks.read(file)))).join('\u0000');
  const states = sources.map((source) => {
    const now = source.files.map((file) => looks.now(file)).join('\u0000');
    return { source, applied: now, seen: now, refused: undefined as string | undefined };
  });
  const attempt = async (state: (typeof states)[number], contents: string, trigger: 'SIGHUP' | 'file') => {
    try {
      const certificates = await state.source.reload();
      state.applied = contents;
      state.refused = undefined;
      events.reloaded(state.source, certificates, trigger);
    } catch (error) {
      state.refused = contents;
      events.failed(state.source, reasonOf(error), trigger);
    }
  };
  const pollOnce = async () => {
    for (const state of states) {
      const contents = await lookAt(state.source.files);
      const steady = contents === state.seen;
      state.seen = contents;
      if (steady && contents !== state.applied && contents !== state.refused)
        await attempt(state, contents, 'file');
    }
  };
  const reloadOnce = async () => {
    for (const state of states) await attempt(state, await lookAt(state.source.files), 'SIGHUP');
  };
  // One poll or reload at a time, in the order asked (an attempt catches its source's
  // failure; one of a caller's events is not swallowed, nor does it stop the next poll).
  let queue: Promise<void> = Promise.resolve();
  let stopped = false;
  const serially = (work: () => Promise<void>): Promise<void> => {
    const run = () => (stopped ? undefined : work());
    queue = queue.then(run, run);
    return queue;
  };
  let polling = false;
  const tick = () => {
    if (polling) return;
    polling = true;
    void serially(pollOnce).finally(() => {
      polling = false;
    });
  };
  const timer = intervalMs > 0 ? setInterval(tick, intervalMs) : undefined;
  timer?.unref();
  return {
    reloadAll: () => serially(reloadOnce),
    poll: () => serially(pollOnce),
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
