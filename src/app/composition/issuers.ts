import { LocalCredentialsIssuer } from '../../adapters/local-credentials/credentials-issuer.js';
import { AWS_ACM_PCA, AWS_STS } from '../../adapters/shared/aws-endpoints.js';
import { bundleHolds, CertificateFileError } from '../../adapters/shared/certificates.js';
import type { CertificateIssuer } from '../../ports/certificate-issuer.js';
import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';
import type { OutgoingTracing } from '../../ports/tracing.js';
import { type Config, ConfigError, type IssuerConfig } from './config.js';
import { readKey, readPem } from './tls-files.js';

/**
 * The issuers `serve` hands out through: queue credentials (`POST /token`) and client
 * certificates (EST, and `certs sign`). Each SDK or X.509 library is loaded only when its
 * issuer is the configured one.
 */

/**
 * The credentials issuer of `POST /token`: AWS STS, or the local development stand-in. The
 * AWS SDK is loaded only for STS (it is the largest thing the service could load). Its
 * endpoint is the one the configuration found (`STS_ENDPOINT`, or the SDK's own settings),
 * given explicitly so that the SDK looks for no other.
 */
export async function createCredentialsIssuer(
  config: Config,
  tracing?: OutgoingTracing,
): Promise<CredentialsIssuer & { close?(): void }> {
  if (config.CREDENTIALS_ISSUER === 'local') return new LocalCredentialsIssuer();
  const { StsCredentialsIssuer } = await import('../../adapters/sts/credentials-issuer.js');
  return new StsCredentialsIssuer({
    region: config.STS_REGION,
    timeoutMs: config.STS_TIMEOUT_MS,
    ...endpointOf(config, AWS_STS.id),
    ...(tracing ? { tracing } : {}),
  });
}

/** The endpoint the configuration found for an AWS client, as its settings take it. */
const endpointOf = (config: IssuerConfig, service: string): { endpoint?: string } => {
  const endpoint = config.awsEndpoints[service];
  return endpoint === undefined ? {} : { endpoint: endpoint.url };
};

/**
 * The issuer of client certificates (decisions §12), by `CLIENT_CERT_ISSUER`: none (null),
 * a local CA (its certificate and key read and checked: the key is the CA's and not readable
 * by others, and the CA is one `TLS_CLIENT_CA` trusts, else what it issued could never be
 * presented), or AWS Private CA (its SDK loaded only then). Throws a ConfigError naming the
 * variable.
 */
export async function createCertificateIssuer(
  config: IssuerConfig,
  clientCaBundle: string,
  tracing?: OutgoingTracing,
): Promise<CertificateIssuer | null> {
  if (config.CLIENT_CERT_ISSUER === 'none') return null;
  if (config.CLIENT_CERT_ISSUER === 'acm-pca') {
    const { AcmPcaCertificateIssuer } = await import('../../adapters/acm-pca/certificate-issuer.js');
    return new AcmPcaCertificateIssuer({
      arn: config.ACM_PCA_ARN ?? '',
      region: config.ACM_PCA_REGION,
      timeoutMs: config.REQUEST_DEADLINE_MS,
      ...endpointOf(config, AWS_ACM_PCA.id),
      ...(tracing ? { tracing } : {}),
    });
  }
  const { LocalCertificateIssuer, LocalIssuerError } = await import('../../adapters/x509/local-issuer.js');
  const issuer = await LocalCertificateIssuer.load(
    readPem('CLIENT_CA_CERT', config.CLIENT_CA_CERT ?? ''),
    readKey('CLIENT_CA_KEY', config.CLIENT_CA_KEY ?? ''),
  ).catch((error: unknown) => {
    throw error instanceof LocalIssuerError ? new ConfigError([error.message]) : error;
  });
  let trusted: boolean;
  try {
    trusted = bundleHolds('TLS_CLIENT_CA', clientCaBundle, issuer.caDer);
  } catch (error) {
    if (error instanceof CertificateFileError) throw new ConfigError([error.message]);
    throw error;
  }
  if (!trusted) {
    throw new ConfigError([
      'CLIENT_CA_CERT: is not in TLS_CLIENT_CA, so the certificates it issues would not be accepted; add it to the bundle',
    ]);
  }
  return issuer;
}
