import * as z from 'zod';
import { optionalText, presentIn, problemsOf, wholeNumber } from '../../../adapters/shared/variables.js';
import type { Environment } from '../../../ports/stores.js';
import { isNoteName } from '../../../tlog/note.js';
import { ConfigError } from '../../config-error.js';

/**
 * The audit trail's variables: its signed checkpoints, their witnesses, its archive and its
 * log's name (`AUDIT_ORIGIN`, also read alone by the audit commands), and the rule between
 * witnesses and signing.
 */

/**
 * The audit log's origin when `AUDIT_ORIGIN` is not set: a name under `.invalid` (RFC 2606),
 * which no real log has, so that each environment sets its own, e.g.
 * `case-read.prod.example.org/audit`.
 */
export const DEFAULT_AUDIT_ORIGIN = 'case-read.invalid/audit';
const AUDIT_ORIGIN_RULE = 'expected a log name without spaces or +, e.g. case-read.prod.example.org/audit';

/** `AUDIT_ORIGIN`'s value (else its default), or undefined when it breaks the rule. */
function auditOrigin(raw: string | undefined): string | undefined {
  const origin = raw || DEFAULT_AUDIT_ORIGIN;
  return isNoteName(origin) ? origin : undefined;
}

/** `AUDIT_ORIGIN`, else its default, for a command that reads nothing else of the configuration. */
export function auditOriginOf(env: Environment): string {
  const origin = auditOrigin(env.AUDIT_ORIGIN);
  if (origin === undefined) throw new ConfigError([`AUDIT_ORIGIN: ${AUDIT_ORIGIN_RULE}`]);
  return origin;
}

export const AUDIT_VARIABLES = {
  // Signed audit checkpoints (decisions §9): on when a key is given.
  AUDIT_SIGNING_KEY: optionalText(),
  AUDIT_CHECKPOINT_RECORDS: wholeNumber('AUDIT_CHECKPOINT_RECORDS', 1000, 1, 10_000_000),
  AUDIT_CHECKPOINT_SECONDS: wholeNumber('AUDIT_CHECKPOINT_SECONDS', 60, 1, 86_400),
  // Witnessed checkpoints (decisions §19): a C2SP tlog-policy file naming the witnesses each
  // checkpoint is sent to and the quorum; read and checked at start (app/composition/audit-witnesses.ts).
  AUDIT_WITNESS_POLICY: optionalText(),
  // Each call to a witness is given this long.
  AUDIT_WITNESS_TIMEOUT_MS: wholeNumber('AUDIT_WITNESS_TIMEOUT_MS', 5_000, 100, 60_000),
  // The CA bundle that signs the witnesses' certificates, when not a public one (PEM file).
  AUDIT_WITNESS_TLS_CA: optionalText(),
  // The trail's archive (`audit archive --to`), read by subject access requests (decisions §22).
  AUDIT_ARCHIVE_DIR: optionalText(),
  // The public halves (PEM files, comma-separated) of the keys AUDIT_SIGNING_KEY replaced: what
  // they signed before a rotation (the archive's checkpoint and crn index) still opens (decisions §23).
  AUDIT_PREVIOUS_PUBLIC_KEYS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === '') return [];
      const paths = raw.split(',').map((path) => path.trim());
      if (paths.some((path) => path === '')) {
        ctx.addIssue({
          code: 'custom',
          message: 'expected public key files separated by commas, none empty',
        });
      }
      return paths;
    }),
  // The audit log's name in its C2SP checkpoints and verifier key (decisions §14).
  AUDIT_ORIGIN: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const origin = auditOrigin(raw);
      if (origin === undefined) ctx.addIssue({ code: 'custom', message: AUDIT_ORIGIN_RULE });
      return origin ?? DEFAULT_AUDIT_ORIGIN;
    }),
};

/**
 * `AUDIT_WITNESS_TIMEOUT_MS` (else its default), read as `serve` reads it, for a command that
 * reads nothing else of the configuration (`audit continue`). A ConfigError naming it otherwise.
 */
export function auditWitnessTimeoutOf(env: Environment): number {
  const name = 'AUDIT_WITNESS_TIMEOUT_MS';
  const parsed = AUDIT_VARIABLES[name].safeParse(presentIn(env, [name])[name]);
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error, name));
  return parsed.data;
}

type WitnessVariables = z.output<
  z.ZodObject<
    Pick<typeof AUDIT_VARIABLES, 'AUDIT_WITNESS_POLICY' | 'AUDIT_SIGNING_KEY' | 'AUDIT_PREVIOUS_PUBLIC_KEYS'>
  >
>;

/** Witnesses cosign what the service signs: a witness policy needs a signing key; so do the keys it replaced. */
export function auditRules(env: WitnessVariables, ctx: z.RefinementCtx): void {
  if (env.AUDIT_WITNESS_POLICY !== undefined && env.AUDIT_SIGNING_KEY === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUDIT_WITNESS_POLICY'],
      message: 'needs AUDIT_SIGNING_KEY: witnesses cosign the checkpoints it signs',
    });
  }
  if (env.AUDIT_PREVIOUS_PUBLIC_KEYS.length > 0 && env.AUDIT_SIGNING_KEY === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUDIT_PREVIOUS_PUBLIC_KEYS'],
      message: 'needs AUDIT_SIGNING_KEY: they are the keys it replaced',
    });
  }
}
