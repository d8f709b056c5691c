import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  DEFAULT_CLIENT_CERT_DAYS,
  DEFAULT_RENEW_WITHIN_DAYS,
  type RenewalDeps,
  renewClientCertificate,
} from '../../domain/certificates/renew.js';
import { AccessDeniedError, isDomainError, RenewalNotConfiguredError } from '../../domain/errors.js';
import {
  CertificateRequestError,
  type CertificateRequests,
  MAX_CSR_BYTES,
} from '../../ports/certificate-requests.js';
import type { AppEnv } from './env.js';
import { type EstRoutes, PKCS7_CERTS_ONLY, PKCS10 } from './est.routes.js';
import { ProblemType, problemResponse } from './problem.js';
import { respond } from './respond.js';

export interface EstDeps extends RenewalDeps {
  readonly requests: CertificateRequests;
  /** For metrics: `issued`, or the reason a renewal was refused. */
  readonly observeRenewal?: (outcome: string) => void;
}

/** Base64 in lines of 64, as PEM and EST bodies are written. */
function base64Lines(der: Uint8Array): string {
  const text = Buffer.from(der).toString('base64');
  return `${text.match(/.{1,64}/g)?.join('\n') ?? ''}\n`;
}

/** Base64 of the largest CSR, padded. */
const MAX_BASE64 = 4 * Math.ceil(MAX_CSR_BYTES / 3);
/**
 * The largest body read: base64 of the largest CSR in lines of 64 characters or more (PEM's 64,
 * MIME's 76) ending in CRLF, and a little to spare. Exported for its property test.
 */
export const MAX_BODY = MAX_BASE64 + 2 * Math.ceil(MAX_BASE64 / 64) + 64;

/**
 * hono's body limit, run for the handler's own read: at most {@link MAX_BODY}, declared or
 * chunked, and past it no more is read (413 `request-too-large`, counted like any refusal).
 */
const limitBody = bodyLimit({
  maxSize: MAX_BODY,
  onError: () => {
    throw new CertificateRequestError('too-large', `a certificate request is at most ${MAX_CSR_BYTES} bytes`);
  },
});

/**
 * The DER an EST body carries: base64 with any line breaks (RFC 7030 §4.2.1), or a
 * CertificateRequestError (400) naming what is wrong. Exported for its property test.
 */
export function derOfEstBody(body: Uint8Array): Uint8Array {
  const text = Buffer.from(body)
    .toString('latin1')
    .replace(/[ \t\r\n]+/g, '');
  // Base64 as RFC 4648 writes it, and only so: Node's decoder would drop a stray last
  // character or a missing pad, so that two bodies would read as one request.
  const der = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : undefined;
  if (der === undefined || der.length === 0 || der.toString('base64') !== text) {
    throw new CertificateRequestError(
      'not-a-csr',
      'the body must be the base64 of a DER PKCS#10 certificate request',
    );
  }
  return new Uint8Array(der);
}

/** The CSR the body carries (see {@link derOfEstBody}), or 400/413 naming what is wrong. */
async function csrOf(c: Context<AppEnv>): Promise<Uint8Array> {
  await limitBody(c, async () => {});
  return derOfEstBody(new Uint8Array(await c.req.arrayBuffer()));
}

/** The metric's label for a refusal: what refused it (`bad-signature`, `already-renewed`, …). */
function outcomeOf(error: unknown): string {
  if (error instanceof CertificateRequestError) return error.problem;
  if (isDomainError(error)) return error.code.toLowerCase().replaceAll('_', '-');
  return 'issuer-failed';
}

/**
 * EST `simplereenroll` and `cacerts` (decisions §12): the body read as base64 DER, the
 * use case run, and the certificate answered as a base64 certs-only PKCS#7. Every refusal
 * is a problem+json and an audit record (operation `renewCertificate`); an issuance records
 * the new certificate's serial.
 */
export function estHandlers(deps: EstDeps) {
  const simpleReenroll: RouteHandler<EstRoutes['simpleReenroll'], AppEnv> = async (c) => {
    const caller = c.get('caller');
    if (caller === undefined) throw new AccessDeniedError('unknown-client');
    const deadline = c.get('deadline');
    try {
      const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
      if (type !== PKCS10) {
        return problemResponse(c, {
          status: 415,
          type: ProblemType.badCertificateRequest,
          title: 'Unsupported media type',
          detail: `the body must be ${PKCS10}: the base64 of a DER PKCS#10 certificate request`,
        });
      }
      deadline.engine = 'credentials';
      const issued = await renewClientCertificate(deps, caller, await csrOf(c), deadline);
      c.set('issued', issued.serialNumber);
      deps.observeRenewal?.('issued');
      return respond(c, 200, base64Lines(deps.requests.certsOnly([issued.pem])), PKCS7_CERTS_ONLY, {
        'Content-Transfer-Encoding': 'base64',
      });
    } catch (error) {
      deps.observeRenewal?.(outcomeOf(error));
      throw error;
    }
  };
  const caCerts: RouteHandler<EstRoutes['caCerts'], AppEnv> = async (c) => {
    c.set('operation', 'getCaCertificates');
    if (deps.issuer === null) throw new RenewalNotConfiguredError();
    const deadline = c.get('deadline');
    deadline.engine = 'credentials';
    const certificates = await deps.issuer.caCertificates(deadline);
    return respond(c, 200, base64Lines(deps.requests.certsOnly(certificates)), PKCS7_CERTS_ONLY, {
      'Content-Transfer-Encoding': 'base64',
    });
  };
  return { simpleReenroll, caCerts };
}

/** No issuer configured: both routes answer 501, and nothing is read. */
export const NO_RENEWAL: EstDeps = {
  issuer: null,
  requests: {
    read: () => Promise.reject(new RenewalNotConfiguredError()),
    certsOnly: () => {
      throw new RenewalNotConfiguredError();
    },
  },
  directory: {
    claimRenewal: () => Promise.reject(new RenewalNotConfiguredError()),
    completeRenewal: () => Promise.reject(new RenewalNotConfiguredError()),
  },
  days: DEFAULT_CLIENT_CERT_DAYS,
  renewWithinDays: DEFAULT_RENEW_WITHIN_DAYS,
  now: () => new Date(),
};
