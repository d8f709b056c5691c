import { readFileSync, statSync } from 'node:fs';
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
   * Reads the files, checks them and uses them for new connections; throws, keeping the set
   * in use, when they are not usable. Returns the certificates now in use.
   */
  reload(): readonly NamedCertificate[];
}

export interface TlsReloadEvents {
  reloaded(source: TlsSource, certificates: readonly NamedCertificate[], trigger: 'SIGHUP' | 'file'): void;
  failed(source: TlsSource, reason: string, trigger: 'SIGHUP' | 'file'): void;
}

/** Why a set was refused: a configuration problem as it is named (`TLS_KEY: …`), else the error's message. */
const reasonOf = (error: unknown): string =>
  error instanceof ConfigError ? error.problems.join('; ') : (error as Error).message;

/**
 * The files' modes and contents as one string: what is compared between reads. A missing
 * file reads as its error.
 */
function contentsOf(files: readonly string[]): string {
  return files
    .map((file) => {
      try {
        const mode = statSync(file).mode & 0o7777;
        return `${mode.toString(8)}\u0000${readFileSync(file, 'utf8')}`;
      } catch (error) {
        return `\u0000unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
      }
    })
    .join('\u0000');
}

export interface TlsWatch {
  /** Reloads every set now (SIGHUP). */
  reloadAll(): void;
  /** Reads the files once, as the timer does (for tests and for a caller that knows). */
  poll(): void;
  stop(): void;
}

export function watchTls(
  sources: readonly TlsSource[],
  intervalMs: number,
  events: TlsReloadEvents,
): TlsWatch {
  const states = sources.map((source) => {
    const now = contentsOf(source.files);
    return { source, applied: now, seen: now, refused: undefined as string | undefined };
  });
  const attempt = (state: (typeof states)[number], contents: string, trigger: 'SIGHUP' | 'file') => {
    try {
      const certificates = state.source.reload();
      state.applied = contents;
      state.refused = undefined;
      events.reloaded(state.source, certificates, trigger);
    } catch (error) {
      state.refused = contents;
      events.failed(state.source, reasonOf(error), trigger);
    }
  };
  const poll = () => {
    for (const state of states) {
      const contents = contentsOf(state.source.files);
      const steady = contents === state.seen;
      state.seen = contents;
      if (steady && contents !== state.applied && contents !== state.refused)
        attempt(state, contents, 'file');
    }
  };
  const timer = intervalMs > 0 ? setInterval(poll, intervalMs) : undefined;
  timer?.unref();
  return {
    reloadAll: () => {
      for (const state of states) attempt(state, contentsOf(state.source.files), 'SIGHUP');
    },
    poll,
    stop: () => clearInterval(timer),
  };
}
