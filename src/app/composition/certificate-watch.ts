import type { Logger } from '../../adapters/pino/logger.js';
import type { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import { type RegularFile, readRegularFile, readRegularFileSync } from '../../adapters/shared/named-files.js';
import { sha256Bytes } from '../../adapters/shared/sha256.js';
import type { RunningServer, TlsFiles } from '../../adapters/tls-listener/server.js';
import type { ReloadableTls } from '../../ports/stores.js';
import type { CertificateExpiry } from '../certificate-expiry.js';
import {
  type FileLooks,
  type NamedCertificate,
  type TlsSource,
  type TlsWatch,
  watchTls,
} from '../tls-reload.js';

/** The listener's own TLS files and certificates, read again on a reload. */
export interface ListenerTlsSource {
  readonly paths: readonly string[];
  readonly certificates: readonly NamedCertificate[];
  /** The set read again and checked: `reloadListenerTls`, which never blocks the event loop. */
  read():
    | { files: TlsFiles; certificates: NamedCertificate[] }
    | Promise<{ files: TlsFiles; certificates: NamedCertificate[] }>;
}

/** A look's own refusal: only its message is kept. */
const lookRefusal = (message: string) => new Error(message);

/** A file as the watch compares it: its mode and a hash of its contents (never the key itself), or why it cannot be used. */
const lookOf = (file: RegularFile): string =>
  `${(file.mode & 0o7777).toString(8)}\u0000${Buffer.from(sha256Bytes(file.bytes)).toString('hex')}`;

/**
 * How the certificate watch looks at its files: by the shared reader (named-files.ts), so a
 * FIFO, a directory or a device in a file's place reads as what it is, at once, and a poll
 * never blocks the event loop; what cannot be used reads as the reason, so a change to it
 * (the FIFO taken away again) is a change.
 */
export const fileLooks: FileLooks = {
  now: (path) => {
    try {
      return lookOf(readRegularFileSync('', path, lookRefusal));
    } catch (error) {
      return `\u0000unusable:${(error as Error).message}`;
    }
  },
  read: async (path) => {
    try {
      return lookOf(await readRegularFile('', path, lookRefusal));
    } catch (error) {
      return `\u0000unusable:${(error as Error).message}`;
    }
  },
};

/**
 * The certificates in use, watched: the listener's (which the SAR door serves too) and each
 * store's with TLS of its own (the upstream case store's client certificate). Their ends go
 * to the expiry metrics at once; `watch` then reloads each set when its files change (and on
 * SIGHUP), and checks them for expiry, logging and counting a set it refuses. The files are
 * looked at with {@link fileLooks} and each set read again by its own reload, awaited: given
 * the asynchronous reads (`reloadListenerTls`, a store's reload that returns a promise),
 * nothing of a reload blocks the event loop.
 */
export function certificateWatch(
  listener: ListenerTlsSource,
  storeTls: readonly ReloadableTls[],
  {
    expiry,
    metrics,
    logger,
    intervalMs,
  }: {
    readonly expiry: CertificateExpiry;
    readonly metrics: Pick<PrometheusMetrics, 'tlsReloadFailed'>;
    readonly logger: Logger;
    readonly intervalMs: number;
  },
): (server: RunningServer, sar?: RunningServer) => TlsWatch {
  const setCertificates = (certificates: readonly NamedCertificate[]) => {
    for (const name of new Set(certificates.map((c) => c.certificate))) {
      expiry.set(
        name,
        certificates.filter((c) => c.certificate === name),
      );
    }
  };
  const storeCertificates = (tls: ReloadableTls): NamedCertificate[] => {
    const inUse = tls.current();
    return inUse ? [{ certificate: tls.name, ...inUse }] : [];
  };
  setCertificates([...listener.certificates, ...storeTls.flatMap(storeCertificates)]);
  return (server, sar) => {
    const sources: TlsSource[] = [
      {
        name: 'server',
        files: [...listener.paths],
        reload: async () => {
          const next = await listener.read();
          if (server.setTls === undefined) throw new Error('the API listener serves no TLS');
          server.setTls(next.files);
          // The SAR service's door serves the same certificate (without the client CA): after
          // the API's listener, whose set it is that may fail to load (a CRL).
          sar?.setTls?.(next.files);
          return next.certificates;
        },
      },
      ...storeTls.map((tls) => ({
        name: tls.name,
        files: tls.files,
        // A store's reload that returns a promise (its files read without blocking) is awaited.
        reload: async () => {
          await tls.reload();
          return storeCertificates(tls);
        },
      })),
    ];
    expiry.start();
    const watch = watchTls(
      sources,
      intervalMs,
      {
        reloaded: (source, certificates, trigger) => {
          setCertificates(certificates);
          const own = certificates.find((c) => c.certificate === source.name);
          logger.info(
            {
              certificate: source.name,
              trigger,
              ...(own ? { serialNumber: own.serialNumber, notAfter: own.notAfter.toISOString() } : {}),
            },
            'tls reloaded',
          );
        },
        failed: (source, reason, trigger) => {
          metrics.tlsReloadFailed(source.name);
          logger.error(
            { certificate: source.name, trigger, reason },
            'tls reload failed, the set in use stays',
          );
        },
      },
      fileLooks,
    );
    return {
      ...watch,
      stop: () => {
        watch.stop();
        expiry.stop();
      },
    };
  };
}
