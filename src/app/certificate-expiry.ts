import type { NamedCertificate } from './tls-reload.js';

/**
 * Expiry made visible before it bites (decisions §10): every certificate the service uses
 * (its own, each client CA, the upstream client certificate) and the one each client last
 * presented, as metrics, and a warning line when one comes within 30, 14, 7 and 1 days of
 * its end (then "expired"): one line as each of those marks is passed, at most one a day
 * per certificate. Checked when a certificate is set or first seen, and every hour.
 */

const DAY_MS = 86_400_000;
const WARN_AT_DAYS = [1, 7, 14, 30] as const;
const CHECK_EVERY_MS = 3_600_000;

export interface ExpiryOutputs {
  /** Replaces the series of one `certificate` label with these. */
  certificates(certificate: string, entries: readonly { subject: string; notAfter: Date }[]): void;
  client(client: string, notAfter: Date): void;
  warn(fields: Record<string, unknown>, message: string): void;
  now(): Date;
}

/** The mark a certificate has passed: 0 when it has expired, the nearest of 1/7/14/30 days, else none. */
function markOf(notAfter: Date, now: Date): number | undefined {
  const daysLeft = (notAfter.getTime() - now.getTime()) / DAY_MS;
  if (daysLeft <= 0) return 0;
  return WARN_AT_DAYS.find((days) => daysLeft <= days);
}

interface Watched {
  readonly fields: Record<string, unknown>;
  readonly notAfter: Date;
  /** The last mark warned of, and the day (UTC date) it was. */
  warned?: { readonly mark: number; readonly day: string };
}

export class CertificateExpiry {
  private readonly watched = new Map<string, Watched>();
  /** Each client's last presented certificate (serial and end): the request path's check. */
  private readonly clients = new Map<
    string,
    { readonly serialNumber: string; readonly notAfterMs: number }
  >();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly out: ExpiryOutputs) {}

  /** The certificates now in use under one name (`server`, `client-ca`, `upstream-client`). */
  set(certificate: string, entries: readonly NamedCertificate[]): void {
    const before = new Map([...this.watched].filter(([key]) => key.startsWith(`${certificate}\u0000`)));
    for (const key of before.keys()) this.watched.delete(key);
    for (const entry of entries) {
      const key = `${certificate}\u0000${entry.subject}\u0000${entry.serialNumber}`;
      // The same certificate set again (a reload) keeps what it was warned of.
      const warned = before.get(key)?.warned;
      this.watched.set(key, {
        fields: { certificate, subject: entry.subject, serialNumber: entry.serialNumber },
        notAfter: entry.notAfter,
        ...(warned ? { warned } : {}),
      });
    }
    // One series per subject; a name held twice in a bundle shows its earlier end.
    const bySubject = new Map<string, Date>();
    for (const { subject, notAfter } of entries) {
      const known = bySubject.get(subject);
      if (known === undefined || notAfter < known) bySubject.set(subject, notAfter);
    }
    this.out.certificates(
      certificate,
      [...bySubject].map(([subject, notAfter]) => ({ subject, notAfter })),
    );
    this.check();
  }

  /**
   * A client presented a certificate: cheap when it is the one it presented before. True
   * when it is another (first seen by this process, or rotated).
   */
  readonly presented = (client: string, serialNumber: string, notAfter: Date): boolean => {
    // Runs on every admitted request: a lookup and two comparisons, nothing allocated.
    const known = this.clients.get(client);
    const notAfterMs = notAfter.getTime();
    if (known !== undefined && known.serialNumber === serialNumber && known.notAfterMs === notAfterMs)
      return false;
    this.clients.set(client, { serialNumber, notAfterMs });
    this.out.client(client, notAfter);
    this.watched.set(`client\u0000${client}`, { fields: { client, serialNumber }, notAfter });
    this.check();
    return true;
  };

  /** Warns of every certificate that has passed a mark since its last warning, at most once a day each. */
  check(): void {
    const now = this.out.now();
    const day = now.toISOString().slice(0, 10);
    for (const watched of this.watched.values()) {
      const mark = markOf(watched.notAfter, now);
      if (mark === undefined) continue;
      const { warned } = watched;
      if (warned !== undefined && (warned.mark <= mark || warned.day === day)) continue;
      watched.warned = { mark, day };
      const daysLeft = Math.max(0, Math.floor((watched.notAfter.getTime() - now.getTime()) / DAY_MS));
      this.out.warn(
        { ...watched.fields, notAfter: watched.notAfter.toISOString(), daysLeft },
        mark === 0 ? 'certificate expired' : `certificate expires within ${mark} day${mark === 1 ? '' : 's'}`,
      );
    }
  }

  /** Checks every hour until stopped. */
  start(): void {
    this.timer ??= setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
