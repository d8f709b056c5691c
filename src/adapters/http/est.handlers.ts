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

/** The largest body read: base64 of the largest CSR, with line breaks. */
const MAX_BODY = Math.ceil((MAX_CSR_BYTES * 4) / 3) + MAX_CSR_BYTES / 32 + 64;

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

/** The CSR the body carries: base64 (any line breaks) of DER, or 400/413 naming what is wrong. */
async function csrOf(c: Context<AppEnv>): Promise<Uint8Array> {
  await limitBody(c, async () => {});
  const text = Buffer.from(await c.req.arrayBuffer())
    .toString('latin1')
    .replace(/\s+/g, '');
  if (text === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
    throw new CertificateRequestError(
      'not-a-csr',
      'the body must be the base64 of a DER PKCS#10 certificate request',
    );
  }
  return new Uint8Array(Buffer.from(text, 'base64'));
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
