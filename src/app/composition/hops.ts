import { AWS_ACM_PCA, AWS_STS, type AwsService } from '../../adapters/shared/aws-endpoints.js';
import { isLoopbackHost } from '../../adapters/shared/loopback.js';
import type { Environment, TlsAssurance } from '../../ports/stores.js';
import { type Config, STORE_VARIABLE_NAMES, tracesUrlOf } from './config.js';
import { STORE_REGISTRY } from './store-kinds.js';

/**
 * `config check`'s table of hops (decisions §17): every connection the service makes or
 * takes, where to, and whether it is encrypted and verified, so that an operator sees at a
 * glance what crosses the network in plaintext.
 */
export interface Hop {
  readonly name: string;
  /** `HOST:PORT`, or where the data stays when it never leaves the host. */
  readonly to: string;
  readonly how: string;
}

const TLS_WORDS: Record<TlsAssurance, string> = {
  none: 'plaintext',
  encrypted: 'TLS, the server NOT verified',
  'verify-ca': "TLS, the server's chain verified (not its host name)",
  'verify-full': "TLS, the server's chain and host name verified",
};

const describe = (tls: TlsAssurance, loopback: boolean): string =>
  tls === 'none' && loopback ? 'plaintext, on loopback (never leaves this host)' : TLS_WORDS[tls];

/** An `http(s)://` URL's hop: https verifies the chain and the host name. `from` names what set it. */
function urlHop(name: string, url: string, from?: string): Hop {
  const { protocol, hostname, port } = new URL(url);
  const https = protocol === 'https:';
  const how = describe(https ? 'verify-full' : 'none', isLoopbackHost(hostname));
  return {
    name,
    to: `${hostname}:${port || (https ? 443 : 80)}`,
    how: from === undefined ? how : `${how}; set by ${from}`,
  };
}

/**
 * An AWS client's hop: the endpoint a setting gave it (the service's own, or the SDK's, as
 * aws-endpoints.ts found it and the client is given it), else the SDK's regional endpoint.
 */
function awsHop(name: string, config: Config, service: AwsService, region: string): Hop {
  const endpoint = config.awsEndpoints[service.id];
  if (endpoint === undefined) {
    return urlHop(name, `https://${service.id.toLowerCase().replaceAll(' ', '-')}.${region}.amazonaws.com`);
  }
  return urlHop(name, endpoint.url, endpoint.from === service.own ? undefined : endpoint.from);
}

/** Every hop of the service; `urls` adds hops of its own (the witnesses of AUDIT_WITNESS_POLICY). */
export function hopsOf(
  config: Config,
  env: Environment,
  urls: readonly { readonly name: string; readonly url: string }[] = [],
): Hop[] {
  const hops: Hop[] = [
    {
      name: 'listener',
      to: `${config.HOST}:${config.PORT}`,
      how:
        config.IDENTITY_MODE === 'tls'
          ? "TLS, each client's certificate verified (mutual TLS)"
          : "TLS, the gateway's certificate verified (mutual TLS); the client named by the gateway",
    },
    {
      name: 'management',
      to: `${config.HOST}:${config.MANAGEMENT_PORT}`,
      how: 'plaintext (metrics, health)',
    },
  ];
  if (config.SAR_PORT !== undefined) {
    hops.push({
      name: 'sar door',
      to: `${config.HOST}:${config.SAR_PORT}`,
      how: "TLS, no client certificate asked; the SAR service's token verified (subject access only)",
    });
  }
  for (const variable of STORE_VARIABLE_NAMES) {
    const hop = STORE_REGISTRY.hop(config[variable]);
    hops.push(
      hop === undefined
        ? { name: variable, to: '(this host)', how: 'no network hop' }
        : { name: variable, to: hop.to, how: describe(hop.tls, hop.loopback) },
    );
  }
  if (env.UPSTREAM_TOKEN_URL) hops.push(urlHop('UPSTREAM_TOKEN_URL', env.UPSTREAM_TOKEN_URL));
  if (config.CREDENTIALS_ISSUER === 'sts') hops.push(awsHop('STS', config, AWS_STS, config.STS_REGION));
  if (config.CLIENT_CERT_ISSUER === 'acm-pca') {
    hops.push(awsHop('ACM_PCA', config, AWS_ACM_PCA, config.ACM_PCA_REGION));
  }
  if (config.BEARER_MODE !== 'off' && config.BEARER_JWKS && /^https:/i.test(config.BEARER_JWKS)) {
    hops.push(urlHop('BEARER_JWKS', config.BEARER_JWKS));
  }
  if (config.SAR_PORT !== undefined && config.SAR_AUTH_JWKS && /^https:/i.test(config.SAR_AUTH_JWKS)) {
    hops.push(urlHop('SAR_AUTH_JWKS', config.SAR_AUTH_JWKS));
  }
  if (config.OTEL_TRACES_EXPORTER === 'otlp') hops.push(urlHop('tracing', tracesUrlOf(config).url));
  for (const { name, url } of urls) hops.push(urlHop(name, url));
  return hops;
}

/** The table as `config check` prints it. */
export const hopLines = (hops: readonly Hop[]): string[] => [
  'hops (each connection, and whether it is encrypted and verified):',
  ...hops.map(({ name, to, how }) => `  ${name.padEnd(18)} ${to.padEnd(32)} ${how}`),
];
