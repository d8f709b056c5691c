import type { AccessListenerFailure } from '../../ports/stores.js';
import { MetricsRegistry } from './registry.js';

/**
 * Request metrics in Prometheus form, served on the management listener's `/metrics`.
 * Labels are bounded: the operation id (or the route template for other paths) and the
 * status code, never a crn or anything a client chose.
 */
export class PrometheusMetrics extends MetricsRegistry {
  private readonly requests = this.counter(
    'case_read_http_requests_total',
    'Requests answered, by operation and status',
    ['operation', 'status'],
  );
  private readonly duration = this.histogram(
    'case_read_http_request_duration_seconds',
    'Time from request to response, by operation',
    ['operation'],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  private readonly rateLimitFallback = this.gauge(
    'case_read_rate_limit_store_fallback',
    '1 while the shared rate-limit store is unreachable and the failure mode is in force',
  );
  private readonly upstreamDuration = this.histogram(
    'case_read_upstream_request_duration_seconds',
    'Calls to the upstream case store (retries included), by outcome',
    ['outcome'],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  private readonly upstreamError = this.countedBy(
    'case_read_upstream_errors_total',
    'Failed calls to the upstream case store, by kind (timeout, 5xx, invalid-body, refused-by-upstream, connection, circuit-open)',
    'kind',
  );
  private readonly rateLimitTransition = this.countedBy(
    'case_read_rate_limit_store_transitions_total',
    'Switches between the shared rate-limit store and its failure mode',
    'to',
  );
  private readonly certificateExpiry = this.gauge(
    'case_read_certificate_expiry_timestamp_seconds',
    'When each certificate in use ends (Unix time): certificate is server, client-ca (one per CA of the bundle) or upstream-client; subject is its CN',
    ['certificate', 'subject'],
  );
  private readonly clientCertificateExpiry = this.gauge(
    'case_read_client_certificate_expiry_timestamp_seconds',
    'When the certificate each registered client last presented ends (Unix time)',
    ['client'],
  );
  /** A set of TLS files was refused on reload; the one in use stays. */
  readonly tlsReloadFailed: (certificate: string) => void = this.countedBy(
    'case_read_tls_reload_failures_total',
    'Sets of TLS files refused on reload (the set in use stays), by certificate (server, upstream-client)',
    'certificate',
  );
  /** The subjects each `certificate` label has series for, so a reload can drop the old. */
  private readonly certificateSubjects = new Map<string, readonly string[]>();

  constructor() {
    super('case_read_');
  }

  /** The certificates in use under one name now (replacing what it had): their ends, in seconds. */
  readonly certificates = (
    certificate: string,
    entries: readonly { subject: string; notAfter: Date }[],
  ): void => {
    for (const subject of this.certificateSubjects.get(certificate) ?? []) {
      this.certificateExpiry.remove({ certificate, subject });
    }
    for (const { subject, notAfter } of entries) {
      this.certificateExpiry.set({ certificate, subject }, notAfter.getTime() / 1000);
    }
    this.certificateSubjects.set(
      certificate,
      entries.map((entry) => entry.subject),
    );
  };

  /** The end of the certificate a registered client last presented. */
  readonly clientCertificate = (client: string, notAfter: Date): void => {
    this.clientCertificateExpiry.set({ client }, notAfter.getTime() / 1000);
  };

  /** One call to the upstream case store: how it ended and how long it took. */
  readonly upstreamCall = (outcome: string, seconds: number): void => {
    this.upstreamDuration.observe({ outcome }, seconds);
    // A limited-access refusal is an answer, not a failure.
    if (outcome !== 'ok' && outcome !== 'not-found' && outcome !== 'limited-access')
      this.upstreamError(outcome);
  };

  /** A request's deadline passed while it waited on `engine`. */
  readonly deadlineExceeded: (engine: string) => void = this.countedBy(
    'case_read_deadline_exceeded_total',
    'Requests answered at their deadline (503, or 504 for another service), by the engine they waited on',
    'engine',
  );
  private readonly overloads = this.counter(
    'case_read_overloaded_total',
    'Requests refused at once (503 overloaded) because MAX_IN_FLIGHT were waiting on engines',
  );

  /** A renewal was asked for: `issued`, or why it was refused (`already-renewed`, `bad-signature`, …). */
  readonly certificateRenewal: (outcome: string) => void = this.countedBy(
    'case_read_certificate_renewals_total',
    'Client certificate renewals (EST simplereenroll): issued, or refused by reason',
    'outcome',
  );

  /** An audit record the store refused: its answer `withheld`, or the record `lost` after every attempt. */
  readonly auditAppendFailed: (outcome: string) => void = this.countedBy(
    'case_read_audit_append_failures_total',
    'Audit records the store refused: withheld (the answer was withheld, 503 audit-unavailable) or lost (given up after every attempt)',
    'outcome',
  );

  /** A request was refused: too many were in flight. */
  readonly overloaded = (): void => {
    this.overloads.inc();
  };

  /** The gauge of requests waiting on engines now, read when scraped. */
  readonly inFlight = (count: () => number): void => {
    this.gauge(
      'case_read_in_flight_requests',
      'Requests admitted and not yet answered (waiting on engines), on this instance',
      [],
      (gauge) => gauge.set(count()),
    );
  };

  /** The rate-limit store was lost (`fallback`) or is back (`store`). */
  readonly rateLimitStoreTransition = (to: 'store' | 'fallback'): void => {
    this.rateLimitTransition(to);
    this.rateLimitFallback.set(to === 'fallback' ? 1 : 0);
  };

  /** The access store's change listener failed (`StoreWiring.onAccessListenerFailure`); reads go uncached until it is back. */
  readonly accessListenerFailed: (failure: AccessListenerFailure) => void = this.countedBy(
    'case_read_access_listener_failures_total',
    "Failures of the PostgreSQL access store's change listener, by failure: connect-failed (a connection or reconnection refused), lost (it ended), silent (a heartbeat unanswered); the access cache is not used until it is back",
    'failure',
  );

  /**
   * The labelled series of each operation and status, found once: prom-client hashes the
   * label values on every call otherwise. Bounded as the labels are.
   */
  private readonly series = new Map<string, { count: () => void; time: (seconds: number) => void }>();

  /** Records one answered request. */
  readonly observe = (operation: string, status: number, seconds: number): void => {
    const key = `${operation}\u0000${status}`;
    let series = this.series.get(key);
    if (series === undefined) {
      const counter = this.requests.labels(operation, String(status));
      const histogram = this.duration.labels(operation);
      series = { count: () => counter.inc(), time: (s) => histogram.observe(s) };
      this.series.set(key, series);
    }
    series.count();
    series.time(seconds);
  };

  /**
   * The audit checkpoints' metrics (decisions §9), registered only when checkpoints are on:
   * the age of the newest stored checkpoint (computed at each scrape), the records after it
   * as of the last check, and this instance's checkpoints and failures.
   */
  auditCheckpoints(): {
    observed(headSeq: number, newest: { readonly seq: number; readonly time: string } | undefined): void;
    signed(): void;
    failed(): void;
  } {
    let newestAt: number | undefined;
    // Registered once there is a newest checkpoint: before, there is no age to show.
    let ageShown = false;
    const showAge = () =>
      this.gauge(
        'case_read_audit_checkpoint_age_seconds',
        'Seconds since the newest stored audit checkpoint was signed (absent before the first)',
        [],
        (gauge) => {
          if (newestAt !== undefined) gauge.set((Date.now() - newestAt) / 1000);
        },
      );
    const after = this.gauge(
      'case_read_audit_records_after_checkpoint',
      'Audit records after the newest stored checkpoint, covered by the chain alone (as of the last check)',
    );
    const signed = this.counter(
      'case_read_audit_checkpoints_total',
      'Audit checkpoints this instance signed',
    );
    const failed = this.counter(
      'case_read_audit_checkpoint_failures_total',
      'Audit checkpoints that could not be taken or stored (each is tried again)',
    );
    return {
      observed: (headSeq, newest) => {
        if (newest !== undefined) {
          newestAt = Date.parse(newest.time);
          if (!ageShown) showAge();
          ageShown = true;
        }
        after.set(headSeq - (newest?.seq ?? 0));
      },
      signed: () => signed.inc(),
      failed: () => failed.inc(),
    };
  }

  /**
   * Witnessed checkpoints (decisions §19): every answer of every witness, by outcome, each
   * series there from the start (an alert on a refusal sees its first one); and how long the
   * newest checkpoint has lacked the quorum: from the time the first checkpoint that lacked it
   * was signed (as this instance saw it), 0 while the newest meets it.
   */
  auditWitnesses(witnesses: readonly string[]): {
    answered(witness: string, outcome: 'cosigned' | 'conflict' | 'refused' | 'unreachable'): void;
    quorum(newestSignedAtMs: number, met: boolean): void;
    /** A quorum of the witnesses holds what the audit store's trail cannot extend: from now on, 1. */
    behind(): void;
  } {
    const submissions = this.counter(
      'case_read_audit_witness_submissions_total',
      'Checkpoints submitted to each witness, by outcome: cosigned, conflict (a 409 followed), refused (it would not cosign: a possible fork), unreachable (tried again)',
      ['witness', 'outcome'],
    );
    for (const witness of witnesses)
      for (const outcome of ['cosigned', 'conflict', 'refused', 'unreachable'] as const)
        submissions.inc({ witness, outcome }, 0);
    let lackingSince: number | undefined;
    this.gauge(
      'case_read_audit_witness_quorum_lacking_seconds',
      "Seconds the newest audit checkpoint has lacked the witness policy's quorum (0 while it meets it)",
      [],
      (gauge) => gauge.set(lackingSince === undefined ? 0 : Math.max(0, (Date.now() - lackingSince) / 1000)),
    );
    let behind = 0;
    this.gauge(
      'case_read_audit_trail_behind_witnesses',
      "1 when a quorum of the witnesses holds what the audit store's trail cannot extend (a store restored from a backup or failed over short): every request is refused until the trail is continued (0 otherwise)",
      [],
      (gauge) => gauge.set(behind),
    );
    return {
      answered: (witness, outcome) => submissions.inc({ witness, outcome }),
      quorum: (signedAt, met) => {
        if (met) lackingSince = undefined;
        else lackingSince ??= signedAt;
      },
      behind: () => {
        behind = 1;
      },
    };
  }
}
