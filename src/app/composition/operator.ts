/**
 * The composition root of the operator commands: the adapters the CLI uses besides the
 * stores (those come from `store-kinds.ts`). A command imports them from here, never from
 * `src/adapters`, so this list (with `audit-keys.ts`, which the audit commands load alone,
 * and `openapi-document.ts`, which only `openapi` loads) is the whole of what the CLI
 * depends on. Nothing here loads the HTTP app, pino or Prometheus: those are `serve`'s.
 */

/** `keys issue`: a new API key and the hash that is stored (node:crypto). */
export { generateApiKey } from '../../adapters/crypto/api-keys.js';
/** `pki init`, `tokens mint`: the development JWT issuer and its JWKS (jose). */
export { createDevIssuer, DEV_AUDIENCE, DEV_ISSUER, mintToken } from '../../adapters/jose/dev-issuer.js';
/** `config check`: the bearer JWKS file is read as `serve` would read it (jose). */
export { keySetFrom } from '../../adapters/jose/token-verifier.js';
/** `tokens mint --bind-cert`: RFC 8705's thumbprint of a certificate (node:crypto). */
export { thumbprintOfPem } from '../../adapters/tls-listener/peer-certificate.js';
/** `certs sign`: a consumer's CSR read and checked as `simplereenroll` reads it (@peculiar/x509). */
export { x509CertificateRequests } from '../../adapters/x509/certificate-requests.js';
/** `pki init`, `pki client`: a development CA, server and client certificates (@peculiar/x509). */
export { createCa, issueClientCertificate, issueServerCertificate, loadCa } from '../../adapters/x509/pki.js';
/** `audit …`: the checkpoints' keys and SHA-256, in a module of their own (loaded alone by the audit commands). */
export * from './audit-keys.js';
/** `config check`: the audit signing key is read and checked as `serve` reads it. */
export { readAuditSigner } from './audit-wiring.js';
/** `config check`: the witness policy is read and checked as `serve` reads it, its witnesses shown as hops. */
export { readAuditWitnessPolicy, witnessUrls } from './audit-witnesses.js';
/** `certs sign`: the configured issuer, built and checked as `serve` builds it. */
export { loadIssuerConfig } from './config.js';
export { createCertificateIssuer } from './issuers.js';
/** `config check`, `certs sign`: the TLS files are read and checked as `serve` reads them. */
export { readClientCa, readListenerTls } from './tls-files.js';
