import type { Environment, StoreHop } from '../../ports/stores.js';
import type { StoreRef, StoreRegistry } from '../stores.js';

/**
 * The production posture (decisions §17, §20): what `NODE_ENV=production` (which the image
 * sets) refuses, checked by `serve`, `config check` and every command that opens a store.
 * Each problem names the variable and what to do. Outside production nothing here is
 * refused, but a `NODE_ENV` that names no mode this service knows is refused everywhere.
 */

/** The modes `NODE_ENV` may name. Unset is development; vitest sets `test`. */
export const NODE_ENV_MODES = ['production', 'development', 'test'] as const;
export type NodeEnvMode = (typeof NODE_ENV_MODES)[number];

/**
 * `NODE_ENV` as the service reads it (decisions §20), the one home of the rule: trimmed and
 * compared without regard to case, so `production\n` (a ConfigMap made from a file),
 * ` production` and `PRODUCTION` are production; unset or empty is development; undefined for
 * any other value, which {@link nodeEnvProblem} refuses rather than take for development.
 */
export function nodeEnvMode(raw: string | undefined): NodeEnvMode | undefined {
  if (raw === undefined || raw === '') return 'development';
  const mode = raw.trim().toLowerCase();
  return NODE_ENV_MODES.find((known) => known === mode);
}

/** A `NODE_ENV` that names none of the modes: refused by every command that checks the posture. */
export function nodeEnvProblem(env: Environment): string | undefined {
  if (nodeEnvMode(env.NODE_ENV) !== undefined) return undefined;
  return `NODE_ENV: expected ${NODE_ENV_MODES.join(', ')} or unset (read trimmed, in any case); a value that is none of them is refused, not taken for development`;
}

/** Production: `NODE_ENV` says so, or names no mode at all (fail closed, where it is not refused first). */
export const isProduction = (env: Environment): boolean => {
  const mode = nodeEnvMode(env.NODE_ENV);
  return mode !== 'development' && mode !== 'test';
};

/**
 * `NODE_TLS_REJECT_UNAUTHORIZED`, Node's own switch: `0` turns certificate verification off
 * for every TLS connection the process makes without saying otherwise (a library's, the
 * SDK's credential providers'). Refused in production; any value but `1` is refused there
 * too, rather than guessed at (Node reads `0` alone as off).
 */
function runtimeTlsProblem(env: Environment): string | undefined {
  const value = env.NODE_TLS_REJECT_UNAUTHORIZED;
  if (value === undefined || value === '' || value === '1') return undefined;
  return value === '0'
    ? 'NODE_TLS_REJECT_UNAUTHORIZED: 0 turns off the check of every server certificate the process is shown, which NODE_ENV=production refuses; unset it (for a private CA, give its bundle: NODE_EXTRA_CA_CERTS, or the variable of the hop)'
    : 'NODE_TLS_REJECT_UNAUTHORIZED: expected 1 or unset, which NODE_ENV=production requires (Node reads 0 alone as off; any other value is refused rather than guessed at)';
}

/**
 * Node's own flags in `NODE_OPTIONS` that weaken every connection the process makes or takes:
 * TLS session keys written to a file (`--tls-keylog`), TLS 1.0/1.1 allowed, OpenSSL's legacy
 * algorithms, a lenient HTTP parser (request smuggling), security fixes reverted.
 */
const WEAKENING_NODE_FLAGS = [
  '--tls-keylog',
  '--tls-min-v1.0',
  '--tls-min-v1.1',
  '--openssl-legacy-provider',
  '--insecure-http-parser',
  '--security-revert',
] as const;

/** `NODE_OPTIONS` naming a flag of {@link WEAKENING_NODE_FLAGS}: refused in production, naming it. */
function runtimeFlagsProblem(env: Environment): string | undefined {
  const flags = (env.NODE_OPTIONS ?? '')
    .split(/\s+/)
    .map((option) => option.split('=')[0] ?? '')
    .filter((flag) => (WEAKENING_NODE_FLAGS as readonly string[]).includes(flag));
  if (flags.length === 0) return undefined;
  return `NODE_OPTIONS: ${[...new Set(flags)].join(', ')} weakens every connection of the process (TLS keys written out, old TLS or algorithms, a lenient HTTP parser), which NODE_ENV=production refuses; remove it`;
}

/** Whether a hop may carry a store's data in production: on this host, or encrypted and verified. */
export const isTrustedHop = (hop: StoreHop): boolean =>
  hop.loopback || hop.tls === 'verify-ca' || hop.tls === 'verify-full';

/** A store off this host that is not encrypted and verified, in production. */
function hopProblem(variable: string, ref: StoreRef, registry: StoreRegistry): string | undefined {
  const hop = registry.hop(ref);
  if (hop === undefined || isTrustedHop(hop)) return undefined;
  const now = hop.tls === 'none' ? 'plaintext' : 'encrypted but not verified';
  return `${variable}: ${hop.to} is reached ${now}, which NODE_ENV=production refuses off this host; ${hop.fix}`;
}

/**
 * What a command that opens the store `ref` (named by `variable`, or the option given) is
 * refused: a `NODE_ENV` of no known mode; in production, verification turned off for the
 * process, or the store off this host without being encrypted and verified.
 */
export function storePostureProblem(
  variable: string,
  ref: StoreRef,
  registry: StoreRegistry,
  env: Environment,
): string | undefined {
  const unknown = nodeEnvProblem(env);
  if (unknown !== undefined) return unknown;
  if (!isProduction(env)) return undefined;
  return runtimeTlsProblem(env) ?? hopProblem(variable, ref, registry);
}

/** An origin that names no real log: unset (the default, `case-read.invalid/audit`) or under `.invalid`. */
const namesNoLog = (origin: string | undefined): boolean =>
  origin === undefined || origin === '' || /\.invalid(\/|$)/i.test(origin);

/** A signed trail must name its log: AUDIT_SIGNING_KEY without a real AUDIT_ORIGIN is refused in production. */
export function auditOriginPostureProblem(env: Environment): string | undefined {
  const unknown = nodeEnvProblem(env);
  if (unknown !== undefined) return unknown;
  if (!isProduction(env) || !env.AUDIT_SIGNING_KEY || !namesNoLog(env.AUDIT_ORIGIN)) return undefined;
  return `AUDIT_ORIGIN: ${env.AUDIT_ORIGIN ? `${env.AUDIT_ORIGIN} is under .invalid and names no real log` : 'unset'}; NODE_ENV=production with AUDIT_SIGNING_KEY needs the log's own name, e.g. case-read.prod.example.org/audit (set it before the first checkpoint: it is the log's name for good)`;
}

/**
 * What `serve` and `config check` refuse: a `NODE_ENV` of no known mode (alone: nothing
 * else is judged on a mode not known); in production, verification turned off for the
 * process, the stores named that are off this host without being encrypted and verified, a
 * CA key or local credentials in the serving process, and a signed trail without its name.
 */
export function servicePostureProblems(
  env: Environment,
  stores: Readonly<Record<string, StoreRef | undefined>>,
  registry: StoreRegistry,
): string[] {
  const unknown = nodeEnvProblem(env);
  if (unknown !== undefined) return [unknown];
  if (!isProduction(env)) return [];
  const problems: string[] = [];
  for (const runtime of [runtimeTlsProblem(env), runtimeFlagsProblem(env)])
    if (runtime !== undefined) problems.push(runtime);
  for (const [variable, ref] of Object.entries(stores)) {
    const problem = ref === undefined ? undefined : hopProblem(variable, ref, registry);
    if (problem !== undefined) problems.push(problem);
  }
  if (env.CREDENTIALS_ISSUER === 'local') {
    problems.push(
      'CREDENTIALS_ISSUER: local is for development only and is refused when NODE_ENV=production; use sts',
    );
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
