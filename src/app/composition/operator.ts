import { createHttpApp } from '../../adapters/http/app.js';
import { LocalCredentialsIssuer } from '../../adapters/local-credentials/credentials-issuer.js';
import { InMemoryCaseRepository } from '../../adapters/memory/case-repository.js';
import type { CrnFormat } from '../../domain/crn.js';

/**
 * The composition root of the operator commands: the adapters the CLI uses besides the
 * stores (those come from `store-kinds.ts`). A command imports them from here, never from
 * `src/adapters`, so this list is the whole of what the CLI depends on.
 */

/** `keys issue`: a new API key and the hash that is stored (node:crypto). */
export { generateApiKey } from '../../adapters/crypto/api-keys.js';
/** `pki init`, `tokens mint`: the development JWT issuer and its JWKS (jose). */
export { createDevIssuer, DEV_AUDIENCE, DEV_ISSUER, mintToken } from '../../adapters/jose/dev-issuer.js';
/** `config check`: the bearer JWKS file is read as `serve` would read it (jose). */
export { keySetFrom } from '../../adapters/jose/token-verifier.js';
/** `cases import`: case files are read and validated as the memory store reads its fixtures. */
export { CaseFileError, loadCaseFile } from '../../adapters/memory/case-file.js';
/** `tokens mint --bind-cert`: RFC 8705's thumbprint of a certificate (node:crypto). */
export { thumbprintOfPem } from '../../adapters/tls-listener/peer-certificate.js';
/** `pki init`, `pki client`: a development CA, server and client certificates (@peculiar/x509). */
export { createCa, issueClientCertificate, issueServerCertificate, loadCa } from '../../adapters/x509/pki.js';
/** `openapi`: the document `serve` serves at /openapi.json, from the same routes. */
export async function openApiDocument(crnFormat: CrnFormat, publicUrl: string): Promise<string> {
  const app = createHttpApp({
    repository: new InMemoryCaseRepository([]),
    crnFormat,
    publicUrl,
    queueTokens: { issuer: new LocalCredentialsIssuer(), defaultRoleArn: null, durationSeconds: 900 },
    perimeter: { disabled: true },
  });
  return (await app.request('/openapi.json')).text();
}

/** `certs sign`: a consumer's CSR read and checked as `simplereenroll` reads it (@peculiar/x509). */
export { x509CertificateRequests } from '../../adapters/x509/certificate-requests.js';
/** `audit …`: the checkpoints' keys and SHA-256, in a module of their own (loaded alone by the audit commands). */
export * from './audit-keys.js';
/** `config check`: the TLS files and the audit signing key are read and checked as `serve` reads them. */
/** `certs sign`: the configured issuer, built and checked as `serve` builds it. */
export { loadIssuerConfig } from './config.js';
export { createCertificateIssuer, readAuditSigner, readClientCa, readListenerTls } from './service.js';
