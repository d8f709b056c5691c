import type { Logger } from '../../adapters/pino/logger.js';
import type { PrometheusMetrics } from '../../adapters/prometheus/metrics.js';
import type { RunningServer, TlsFiles } from '../../adapters/tls-listener/server.js';
import type { ReloadableTls } from '../../ports/stores.js';
import type { CertificateExpiry } from '../certificate-expiry.js';
import { type NamedCertificate, type TlsSource, type TlsWatch, watchTls } from '../tls-reload.js';

/** The listener's own TLS files and certificates, read again on a reload. */
export interface ListenerTlsSource {
  readonly paths: readonly string[];
  readonly certificates: readonly NamedCertificate[];
  read(): { files: TlsFiles; certificates: NamedCertificate[] };
}

/**
 * The certificates in use, watched: the listener's and each store's with TLS of its own
 * (the upstream case store's client certificate). Their ends go to the expiry metrics at
 * once; `watch` then reloads each set when its files change (and on SIGHUP), and checks
 * them for expiry, logging and counting a set it refuses.
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
): (server: RunningServer) => TlsWatch {
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
  return (server) => {
    const sources: TlsSource[] = [
      {
        name: 'server',
        files: [...listener.paths],
        reload: () => {
          const next = listener.read();
          if (server.setTls === undefined) throw new Error('the API listener serves no TLS');
          server.setTls(next.files);
          return next.certificates;
        },
      },
      ...storeTls.map((tls) => ({
        name: tls.name,
        files: tls.files,
        reload: () => {
          tls.reload();
          return storeCertificates(tls);
        },
      })),
    ];
    expiry.start();
    const watch = watchTls(sources, intervalMs, {
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
    });
    return {
      ...watch,
      stop: () => {
        watch.stop();
        expiry.stop();
      },
    };
  };
}
