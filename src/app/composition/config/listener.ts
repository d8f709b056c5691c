import * as z from 'zod';
import { oneOf, optionalText, wholeNumber } from '../../../adapters/shared/variables.js';
import { SERVER_LIMITS } from '../../../adapters/tls-listener/limits.js';
import { DEFAULT_MAX_IN_FLIGHT, DEFAULT_REQUEST_DEADLINE_MS } from '../../../ports/deadline.js';

/**
 * The listener's variables: its TLS files, who may set a caller's identity, how long
 * connections and requests live, and where it listens; and the rule between the first two.
 */

const filePath = (what: string) => z.string({ error: `required: the path of ${what}` }).min(1);

/** A port number written in digits, 0..65535; anything else refused naming `name`. */
const portNumber = (name: string) => (raw: string, ctx: z.RefinementCtx) => {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 0 || n > 65535) {
    ctx.addIssue({ code: 'custom', message: `${name} must be a port number 0..65535` });
    return z.NEVER;
  }
  return n;
};

const port = (name: string, fallback: number) =>
  z.string().default(String(fallback)).transform(portNumber(name));

/** A port that may be left unset (a listener that is not started then). */
export const optionalPort = (name: string) => z.string().transform(portNumber(name)).optional();

/** TLS, identity, connections and deadlines: the first of the service's variables. */
export const LISTENER_VARIABLES = {
  TLS_CERT: filePath('the server certificate (PEM)'),
  TLS_KEY: filePath("the server certificate's private key (PEM)"),
  TLS_CLIENT_CA: filePath('the CA bundle trusted for client certificates (PEM)'),
  TLS_CRL: optionalText(),
  // How often the certificate files are read for a change (a mounted secret swapped
  // underneath); 0: only on SIGHUP.
  TLS_WATCH_MS: wholeNumber('TLS_WATCH_MS', 1_000, 0, 3_600_000),
  IDENTITY_MODE: oneOf(['tls', 'trusted-header'], 'tls'),
  TRUSTED_GATEWAYS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined) return undefined;
      const names = raw.split(',').map((name) => name.trim());
      if (names.some((name) => !/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/.test(name))) {
        ctx.addIssue({
          code: 'custom',
          message:
            'expected comma-separated certificate CNs of 1-64 characters (letters, digits, space . _ @ -)',
        });
        return z.NEVER;
      }
      return [...new Set(names)];
    }),
  SHUTDOWN_GRACE_MS: wholeNumber('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
  // How long an idle keep-alive connection is kept open (both listeners). It must be longer
  // than the idle timeout of whatever keeps connections to the service (AWS ALB and nginx's
  // upstream keep-alive: 60 s), so that side always closes first and never sends a request
  // on a connection the service is closing (docs/operations/deployment.md).
  KEEP_ALIVE_TIMEOUT_MS: wholeNumber(
    'KEEP_ALIVE_TIMEOUT_MS',
    SERVER_LIMITS.keepAliveTimeoutMs,
    1_000,
    3_600_000,
  ),
  // Deadlines and overload (decisions §11): every request is answered within its deadline,
  // whatever the engines do, and at most MAX_IN_FLIGHT wait on them at once.
  REQUEST_DEADLINE_MS: wholeNumber('REQUEST_DEADLINE_MS', DEFAULT_REQUEST_DEADLINE_MS, 100, 60_000),
  MAX_IN_FLIGHT: wholeNumber('MAX_IN_FLIGHT', DEFAULT_MAX_IN_FLIGHT, 1, 100_000),
  // On SIGTERM, readiness is 503 this long before the listener closes, so a balancer's
  // health check sees it first (HAProxy's defaults, inter 2 s × fall 3, take 6 s).
  SHUTDOWN_DELAY_MS: wholeNumber('SHUTDOWN_DELAY_MS', 7_000, 0, 600_000),
};

/**
 * Where the two listeners listen: apart from {@link LISTENER_VARIABLES} because the service's
 * variables list them later (after the audit and bearer ones), the order `config check` shows.
 */
export const LISTENER_ADDRESS_VARIABLES = {
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port('PORT', 8443),
  MANAGEMENT_PORT: port('MANAGEMENT_PORT', 9464),
};

type IdentityVariables = z.output<
  z.ZodObject<Pick<typeof LISTENER_VARIABLES, 'IDENTITY_MODE' | 'TRUSTED_GATEWAYS'>>
>;

/** A gateway may set the identity headers only when the service is told which gateways those are. */
export function identityRules(env: IdentityVariables, ctx: z.RefinementCtx): void {
  if (env.IDENTITY_MODE === 'trusted-header' && env.TRUSTED_GATEWAYS === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['TRUSTED_GATEWAYS'],
      message:
        'required when IDENTITY_MODE=trusted-header: the CNs of the gateways whose verified certificates may set the identity headers',
    });
  }
}
