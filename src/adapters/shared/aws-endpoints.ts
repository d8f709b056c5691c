import type { Environment } from '../../ports/stores.js';
import { type AwsSharedConfig, AwsSharedConfigError, readAwsSharedConfig } from './aws-shared-config.js';
import { HTTPS_ONLY, isEncryptedOrLoopback } from './loopback.js';

/**
 * Where the AWS SDK sends the service's calls, and the rule on every endpoint setting the SDK
 * reads (decisions §20): the SDK's settings are the service's. Besides the service's own
 * `STS_ENDPOINT` and `ACM_PCA_ENDPOINT`, the SDK takes an endpoint from
 * `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL`, and the shared config file's profile
 * (`[services NAME]` section's `<service>.endpoint_url`, then the profile's `endpoint_url`),
 * unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` (or the profile's
 * `ignore_configured_endpoint_urls`) is `true`. That order is the SDK's own
 * (`getEndpointFromConfig` in `@smithy/core/endpoints`, and `@smithy/middleware-endpoint`
 * 2.5 under `@aws-sdk/client-acm-pca`), pinned against the real clients by
 * test/adapters/shared/aws-endpoints.test.ts.
 *
 * The endpoint found here is handed to the client explicitly (aws-client.ts), and an
 * explicit endpoint is one the SDK never overrides: what `config check` shows is what the
 * client uses. Every such setting, used by the service's own clients or not, must be
 * `https://` or `http://` to a loopback host: the SDK's credential providers build clients
 * of their own (STS for a web identity, SSO) that read the same settings and carry tokens on
 * them.
 */

/** An AWS service the service calls, by the SDK's names for it. */
export interface AwsService {
  /**
   * The SDK's service id (`STS`, `ACM PCA`): its variable is `AWS_ENDPOINT_URL_` and the id's
   * words in capitals joined by `_`, its config key the words in lower case (`acm_pca.endpoint_url`).
   */
  readonly id: string;
  /** The service's own variable for the endpoint: given to the client, no SDK setting overrides it. */
  readonly own: string;
  /**
   * Whether the client, as installed, honours `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`:
   * `@aws-sdk/client-sts` does; `@aws-sdk/client-acm-pca` 3.523 (`@smithy/middleware-endpoint`
   * 2.5) reads the settings whatever it says. Followed here so that what is shown is what that
   * client would use.
   */
  readonly honoursIgnore: boolean;
}

/** AWS STS, which `POST /token` calls (`CREDENTIALS_ISSUER=sts`). */
export const AWS_STS: AwsService = { id: 'STS', own: 'STS_ENDPOINT', honoursIgnore: true };
/** AWS Private CA, which signs client certificates (`CLIENT_CERT_ISSUER=acm-pca`). */
export const AWS_ACM_PCA: AwsService = { id: 'ACM PCA', own: 'ACM_PCA_ENDPOINT', honoursIgnore: false };

/** An endpoint a setting names, and which setting. */
export interface AwsEndpoint {
  readonly url: string;
  /** The variable (`STS_ENDPOINT`, `AWS_ENDPOINT_URL_STS`), or the file, profile and key. */
  readonly from: string;
}

/** The endpoints of the services asked for, and what is wrong with the SDK's settings. */
export interface AwsEndpoints {
  /** By service id; a service without one goes to the SDK's own endpoint for its region. */
  readonly endpoints: Readonly<Record<string, AwsEndpoint>>;
  readonly problems: readonly string[];
}

/** Every variable the SDK reads an endpoint from: AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>. */
const ENDPOINT_VARIABLE = /^AWS_ENDPOINT_URL(?:_\w+)?$/;
const IGNORE_VARIABLE = 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS';
const WHY = 'the AWS SDK sends signed requests there, and credentials come back on it';

const secure = (value: string): boolean => URL.canParse(value) && isEncryptedOrLoopback(new URL(value));

/** The SDK's boolean: `true` or `false` exactly; undefined for unset or any other value. */
const booleanOf = (value: string | undefined): boolean | undefined =>
  value === 'true' ? true : value === 'false' ? false : undefined;

const envSuffix = (service: AwsService): string =>
  service.id
    .split(' ')
    .map((word) => word.toUpperCase())
    .join('_');
const configKey = (service: AwsService): string =>
  `${service.id
    .split(' ')
    .map((word) => word.toLowerCase())
    .join('_')}.endpoint_url`;

/** What is wrong with the settings, each naming the variable, or the file, profile and key. */
function problemsOf(env: Environment, shared: AwsSharedConfig | undefined): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (ENDPOINT_VARIABLE.test(name) && value && !secure(value))
      problems.push(`${name}: ${HTTPS_ONLY}; ${WHY}`);
  }
  const ignore = env[IGNORE_VARIABLE];
  if (ignore && booleanOf(ignore) === undefined) {
    problems.push(`${IGNORE_VARIABLE}: expected true or false (the AWS SDK takes any other value for unset)`);
  }
  if (shared === undefined) return problems;
  const { profile, profileName } = shared;
  const at = (key: string) => `${shared.fileOf(key).named}, profile ${profileName}: ${key}`;
  const ignoreKey = 'ignore_configured_endpoint_urls';
  if (profile[ignoreKey] !== undefined && booleanOf(profile[ignoreKey]) === undefined) {
    problems.push(`${at(ignoreKey)}: expected true or false`);
  }
  if (profile.endpoint_url !== undefined && !secure(profile.endpoint_url)) {
    problems.push(`${at('endpoint_url')}: ${HTTPS_ONLY}; ${WHY}`);
  }
  if (profile.services !== undefined) {
    const section = shared.configSections[`services.${profile.services}`];
    if (section === undefined) {
      problems.push(
        `${at('services')}: names no [services ${profile.services}] section in ${shared.configFile.named} (the AWS SDK would then pass over the profile's endpoint settings)`,
      );
    } else {
      for (const [key, value] of Object.entries(section)) {
        if (key.endsWith('.endpoint_url') && !secure(value)) {
          problems.push(
            `${shared.configFile.named}, [services ${profile.services}]: ${key}: ${HTTPS_ONLY}; ${WHY}`,
          );
        }
      }
    }
  }
  return problems;
}

/** Whether configured endpoints are to be passed over: the variable, else the profile's key. */
function ignoresConfigured(env: Environment, shared: AwsSharedConfig | undefined): boolean {
  return (
    booleanOf(env[IGNORE_VARIABLE]) ?? booleanOf(shared?.profile.ignore_configured_endpoint_urls) ?? false
  );
}

/** The endpoint `service`'s client would use, in the SDK's order; undefined: its regional one. */
function endpointOf(
  service: AwsService,
  env: Environment,
  shared: AwsSharedConfig | undefined,
): AwsEndpoint | undefined {
  const own = env[service.own];
  if (own) return { url: own, from: service.own };
  if (service.honoursIgnore && ignoresConfigured(env, shared)) return undefined;
  for (const name of [`AWS_ENDPOINT_URL_${envSuffix(service)}`, 'AWS_ENDPOINT_URL']) {
    const value = env[name];
    if (value) return { url: value, from: name };
  }
  if (shared === undefined) return undefined;
  const { profile, profileName } = shared;
  if (profile.services !== undefined) {
    const key = configKey(service);
    const url = shared.configSections[`services.${profile.services}`]?.[key];
    if (url) return { url, from: `${shared.configFile.named}, [services ${profile.services}]: ${key}` };
  }
  if (profile.endpoint_url) {
    return {
      url: profile.endpoint_url,
      from: `${shared.fileOf('endpoint_url').named}, profile ${profileName}: endpoint_url`,
    };
  }
  return undefined;
}

/**
 * The endpoints of `services` as their clients would find them, and every problem with the
 * SDK's endpoint settings (see above). The service's own variables (`STS_ENDPOINT`, …) are
 * checked by the configuration's schema, not here. With no service asked for, the SDK is not
 * used and nothing is read.
 */
export function awsEndpointsOf(env: Environment, services: readonly AwsService[]): AwsEndpoints {
  if (services.length === 0) return { endpoints: {}, problems: [] };
  let shared: AwsSharedConfig | undefined;
  const problems: string[] = [];
  try {
    shared = readAwsSharedConfig(env);
  } catch (error) {
    if (!(error instanceof AwsSharedConfigError)) throw error;
    problems.push(error.message);
  }
  problems.push(...problemsOf(env, shared));
  const endpoints: Record<string, AwsEndpoint> = {};
  for (const service of services) {
    const endpoint = endpointOf(service, env, shared);
    if (endpoint !== undefined) endpoints[service.id] = endpoint;
  }
  return { endpoints, problems };
}
