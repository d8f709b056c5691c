// The service's configuration put together from its areas (config/): loadConfig and Config.
import { problemsOf } from '../../adapters/shared/variables.js';
import type { Environment } from '../../ports/stores.js';
import { ConfigError } from '../config-error.js';
import type { StoreRef, StoreRegistry } from '../stores.js';
import { type AwsEndpointsOf, awsEndpointsFor } from './config/aws.js';
import { readServiceVariables, type ServiceVariables } from './config/service.js';
import { readStores, type StoreVariable } from './config/stores.js';
import { otelTlsFileProblems } from './config/traces.js';
import { servicePostureProblems } from './posture.js';

/**
 * The service's configuration put together from its areas, read from environment variables
 * and validated at start-up, as plain data: the service's own variables (each area's read in
 * its own file under config/, see config/service.ts), its four stores and its AWS endpoints.
 * A bad value stops the process with a message naming the variable and the expected form. The
 * four store variables become `{ role, kind, url, settings }` (config/stores.ts); the
 * composition root opens them.
 */

export { auditOriginOf, auditWitnessTimeoutOf, DEFAULT_AUDIT_ORIGIN } from './config/audit.js';
export type { AwsEndpointsOf } from './config/aws.js';
export { type IssuerConfig, loadIssuerConfig } from './config/issuer.js';
export { crnFormatOf, SERVICE_VARIABLES } from './config/service.js';
export { STORE_VARIABLE_NAMES, STORE_VARIABLES, type StoreVariable, storeUrlOf } from './config/stores.js';
export { tracesUrlOf } from './config/traces.js';

/** Re-exported from its own file: the commands name it from here, the application from there. */
export { ConfigError };

/** The configuration: the service's own variables, its four stores, and its AWS endpoints. */
export type Config = ServiceVariables & { readonly [K in StoreVariable]: StoreRef } & AwsEndpointsOf;

/** Reads the configuration from `env`; throws {@link ConfigError} naming every bad variable. */
export function loadConfig(env: Environment, registry: StoreRegistry): Config {
  const parsed = readServiceVariables(env);
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  const { stores, problems: storeProblems } = readStores(env, registry);
  problems.push(...storeProblems);
  problems.push(...servicePostureProblems(env, stores, registry));
  // The SDKs' own settings, once the service's say which SDK clients are used.
  const aws = parsed.success ? awsEndpointsFor(env, parsed.data) : undefined;
  problems.push(...(aws?.problems ?? []));
  problems.push(...otelTlsFileProblems(env, parsed.success && parsed.data.OTEL_TRACES_EXPORTER === 'otlp'));
  const { CASE_STORE, ACCESS_STORE, AUDIT_STORE, RATE_LIMIT_STORE } = stores;
  const complete = CASE_STORE && ACCESS_STORE && AUDIT_STORE && RATE_LIMIT_STORE;
  if (!parsed.success || problems.length > 0 || !complete || aws === undefined)
    throw new ConfigError(problems);
  return {
    ...parsed.data,
    CASE_STORE,
    ACCESS_STORE,
    AUDIT_STORE,
    RATE_LIMIT_STORE,
    awsEndpoints: aws.endpoints,
  };
}
