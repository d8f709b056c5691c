import type { Environment, StoreHop } from '../../ports/stores.js';
import type { StoreRef, StoreRegistry } from '../stores.js';

/**
 * The production posture (decisions §17): what `NODE_ENV=production` (which the image sets)
 * refuses, checked by `serve`, `config check` and every command that opens a store. Each
 * problem names the variable and what to do. Outside production nothing here is refused.
 */

export const isProduction = (env: Environment): boolean => env.NODE_ENV === 'production';

/** Whether a hop may carry a store's data in production: on this host, or encrypted and verified. */
export const isTrustedHop = (hop: StoreHop): boolean =>
  hop.loopback || hop.tls === 'verify-ca' || hop.tls === 'verify-full';

/** A store off this host that is not encrypted and verified, refused in production. */
export function storePostureProblem(
  variable: string,
  ref: StoreRef,
  registry: StoreRegistry,
  env: Environment,
): string | undefined {
  if (!isProduction(env)) return undefined;
  const hop = registry.hop(ref);
  if (hop === undefined || isTrustedHop(hop)) return undefined;
  const now = hop.tls === 'none' ? 'plaintext' : 'encrypted but not verified';
  return `${variable}: ${hop.to} is reached ${now}, which NODE_ENV=production refuses off this host; ${hop.fix}`;
}

/** An origin that names no real log: unset (the default, `case-read.invalid/audit`) or under `.invalid`. */
const namesNoLog = (origin: string | undefined): boolean =>
  origin === undefined || origin === '' || /\.invalid(\/|$)/i.test(origin);

/** A signed trail must name its log: AUDIT_SIGNING_KEY without a real AUDIT_ORIGIN is refused in production. */
export function auditOriginPostureProblem(env: Environment): string | undefined {
  if (!isProduction(env) || !env.AUDIT_SIGNING_KEY || !namesNoLog(env.AUDIT_ORIGIN)) return undefined;
  return `AUDIT_ORIGIN: ${env.AUDIT_ORIGIN ? `${env.AUDIT_ORIGIN} is under .invalid and names no real log` : 'unset'}; NODE_ENV=production with AUDIT_SIGNING_KEY needs the log's own name, e.g. case-read.prod.example.org/audit (set it before the first checkpoint: it is the log's name for good)`;
}

/** What `serve` and `config check` refuse in production: the stores named, and the service's own. */
export function servicePostureProblems(
  env: Environment,
  stores: Readonly<Record<string, StoreRef | undefined>>,
  registry: StoreRegistry,
): string[] {
  if (!isProduction(env)) return [];
  const problems: string[] = [];
  for (const [variable, ref] of Object.entries(stores)) {
    const problem = ref === undefined ? undefined : storePostureProblem(variable, ref, registry, env);
    if (problem !== undefined) problems.push(problem);
  }
  if (env.CLIENT_CERT_ISSUER === 'local') {
    problems.push(
      "CLIENT_CERT_ISSUER: local keeps the client CA's private key in the serving process, which NODE_ENV=production refuses; use acm-pca (certs sign with a local CA on an operator's machine stays allowed)",
    );
  }
  const origin = auditOriginPostureProblem(env);
  if (origin !== undefined) problems.push(origin);
  return problems;
}
