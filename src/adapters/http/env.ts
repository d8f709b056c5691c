import type { Caller, ClientCertificate } from '../../domain/access/model.js';
import type { RequestDeadline } from './deadline.js';

/** Response headers by lower-case name: one plain object per request (see respond.ts). */
export type ResponseHeaders = Record<string, string>;

/** The admitted client (steps 3–4): the caller before steps 6–8. */
export type Admitted = Pick<Caller, 'client' | 'certificate' | 'apiKeyId'>;

/**
 * Who the audit trail records a request as: the client, and the serial of the certificate it
 * presented ("" at the SAR service's door, where the caller presents none and is known by its
 * token).
 */
export interface AuditedCaller {
  readonly clientId: string;
  readonly certificateSerial: string;
}

/** What every request context carries through the HTTP adapter. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** The response headers, filled as the request goes (see respond.ts). */
    headers: ResponseHeaders;
    /** The request's deadline, set as it is admitted (see request-cycle.ts). */
    deadline: RequestDeadline;
    /** The client certificate (step 2), once known. */
    certificate?: ClientCertificate;
    /**
     * Who the request is recorded as, once its caller is identified: the certificate's CN and
     * serial (step 2), or the client of the SAR service's verified token at its door. Unset, the
     * request leaves no audit record (a caller never identified, like a failed handshake).
     */
    auditedAs?: AuditedCaller;
    /** The admitted client (steps 3–4). */
    admitted?: Admitted;
    /** The caller with its effective permissions (steps 6–8). */
    caller?: Caller;
    /** The operation id of the route, once the guard has run: for the audit record. */
    operation?: string;
    /** Set when a limited case was answered to a client acting as itself under `allow`: for the audit record. */
    access?: 'client-enforces';
    /** The problem type of a refusal, once answered: for the audit record. */
    problem?: string;
    /** The serial of a certificate this request issued (renewCertificate), for the audit record. */
    issued?: string;
  };
}

/** One answered request, for the access log. */
export interface AccessEntry {
  readonly requestId: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly ms: number;
}

/** The structured logger the adapter writes to (pino in production, a spy in tests). */
export interface HttpLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /** The access-log line of a request; without it, `info(entry, 'request')`. */
  request?(entry: AccessEntry): void;
}

/** The logger of an app given none (tests of the core): it says nothing. */
export const SILENT_LOGGER: HttpLogger = { info: () => {}, error: () => {} };
