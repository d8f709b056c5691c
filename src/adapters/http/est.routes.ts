import { createRoute, z } from '@hono/zod-openapi';
import { MAX_CSR_BYTES } from '../../ports/certificate-requests.js';
import type { OperationGuard } from './cases.routes.js';
import { gatewayTimeout, problem, unavailable } from './route-responses.js';

/** EST's certs-only PKCS#7 media type (RFC 7030 §4.1.3, §4.2.3). */
export const PKCS7_CERTS_ONLY = 'application/pkcs7-mime; smime-type=certs-only';
export const PKCS10 = 'application/pkcs10';

const certsOnly = (description: string) => ({
  description,
  headers: {
    'Content-Transfer-Encoding': { description: 'Always base64', schema: { type: 'string' as const } },
  },
  content: {
    [PKCS7_CERTS_ONLY]: {
      schema: z.string().openapi({
        description:
          'Base64 of a DER certs-only PKCS#7 (CMS SignedData with no signers). Read it with: base64 -d | openssl pkcs7 -inform DER -print_certs',
        format: 'byte',
      }),
    },
  },
});

/** What both EST operations may answer besides their own. */
const EST_REFUSALS = {
  403: problem('API key missing or invalid, client not allowed, or permission renewCertificate not granted'),
  429: problem('Rate limit exceeded'),
  500: problem('Unexpected error'),
  501: problem('No certificate issuer is configured (urn:case-read:problem:renewal-not-configured)'),
  502: problem('The certificate issuer failed'),
  503: unavailable,
  504: gatewayTimeout('The certificate issuer'),
} as const;

/**
 * Certificate renewal by the consumer, over EST (RFC 7030, decisions §12): not versioned,
 * under `/.well-known/est/`, behind the same mutual TLS and API key as everything else and
 * the `renewCertificate` permission. No bearer token: the certificate is what is renewed.
 */
export function estRoutes(guard: OperationGuard) {
  return {
    simpleReenroll: createRoute({
      method: 'post',
      path: '/.well-known/est/simplereenroll',
      operationId: 'renewCertificate',
      middleware: guard('renewCertificate'),
      tags: ['Certificates'],
      summary: 'Renew the presented client certificate (EST simplereenroll)',
      description:
        `The body is the base64 of a DER PKCS#10 CSR (at most ${MAX_CSR_BYTES} bytes of DER) for a new key, ` +
        'subject exactly CN=<the CN of the presented certificate>. Accepted only while the presented certificate ' +
        'is within CLIENT_CERT_RENEW_WITHIN_DAYS of its end (responses then carry Client-Certificate-Expires), ' +
        'once per certificate. What is issued is decided by the service: CN only, CLIENT_CERT_DAYS, clientAuth.',
      security: [{ mutualTLS: [], apiKey: [] }],
      request: {
        body: {
          required: true,
          content: {
            [PKCS10]: {
              schema: z.string().openapi({ description: 'Base64 of a DER PKCS#10 CSR', format: 'byte' }),
            },
          },
        },
      },
      responses: {
        200: certsOnly('The new certificate'),
        400: problem(
          'Not base64 of a DER CSR, its signature does not verify, its key is not EC P-256/P-384, Ed25519 or RSA ≥ 2048, or its subject is not exactly CN=<your CN> (urn:case-read:problem:bad-certificate-request)',
        ),
        409: problem(
          'This certificate was renewed already (urn:case-read:problem:already-renewed), or it is not yet within its renewal window (urn:case-read:problem:renew-too-early)',
        ),
        413: problem('The CSR is too large (urn:case-read:problem:request-too-large)'),
        415: problem('The body is not application/pkcs10'),
        ...EST_REFUSALS,
      },
    }),
    caCerts: createRoute({
      method: 'get',
      path: '/.well-known/est/cacerts',
      operationId: 'getCaCertificates',
      middleware: guard('renewCertificate'),
      tags: ['Certificates'],
      summary: 'The CA that issues client certificates (EST cacerts)',
      description:
        'The certificate of the CA that issues client certificates here (and any chain above it), ' +
        'as the base64 of a DER certs-only PKCS#7, the same way simplereenroll answers. ' +
        'Needs the same mutual TLS, API key and renewCertificate permission; nothing is issued.',
      security: [{ mutualTLS: [], apiKey: [] }],
      responses: {
        200: certsOnly('The issuing CA certificate (and any chain above it)'),
        ...EST_REFUSALS,
      },
    }),
  };
}
export type EstRoutes = ReturnType<typeof estRoutes>;
