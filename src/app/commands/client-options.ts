// A client's settings as `clients add` and `clients update` take them: each option read and
// checked here, once (clientChangeOf), then applied to the client held, or to a new one
// (changedClient), where what the options need of each other once merged with what is held
// (the on-behalf-of settings) is checked.
import { jwksSourceProblem } from '../../domain/access/jwks-source.js';
import {
  DEFAULT_LIMITED_ACCESS_SETTING,
  type LimitedAccessSetting,
  parseLimitedAccessSetting,
} from '../../domain/access/limited-access.js';
import type { Client, OnBehalfOfMode, OnBehalfOfSettings } from '../../domain/access/model.js';
import { type Permission, parsePermissionList } from '../../domain/access/permissions.js';
import { parseRedactList, type RedactableField } from '../../domain/access/redaction.js';
import { QueueArn, RoleArn } from '../../domain/queue/arns.js';
import { parseRateLimit } from '../durations.js';
import { usage } from './arguments.js';
import { UsageError } from './exit.js';

/** A client's settings as given on the command line: each one not given is left as it is. */
export interface ClientOptionsGiven {
  readonly permissions?: string | undefined;
  readonly queueArn?: string | undefined;
  readonly roleArn?: string | undefined;
  readonly rateLimit?: string | undefined;
  readonly obo?: string | undefined;
  readonly oboIssuer?: string | undefined;
  readonly oboJwks?: string | undefined;
  readonly oboAudience?: string | undefined;
  readonly oboEmailClaim?: string | undefined;
  readonly redact?: string | undefined;
  readonly limitedAccess?: string | undefined;
}

/** A client's setting, by its name in {@link ClientOptionsGiven}. */
type Setting = keyof ClientOptionsGiven;

/** Each setting's option, in the order `clients add` lists them. */
export const CLIENT_OPTIONS: Readonly<Record<Setting, string>> = {
  permissions: '--permissions',
  queueArn: '--queue-arn',
  roleArn: '--role-arn',
  rateLimit: '--rate-limit',
  obo: '--obo',
  oboIssuer: '--obo-issuer',
  oboJwks: '--obo-jwks',
  oboAudience: '--obo-audience',
  oboEmailClaim: '--obo-email-claim',
  redact: '--redact',
  limitedAccess: '--limited-access',
};

/** Whether any of a client's settings is given. */
export const anyClientOptionGiven = (given: ClientOptionsGiven): boolean =>
  (Object.keys(CLIENT_OPTIONS) as Setting[]).some((key) => given[key] !== undefined);

/** What `--rate-limit`, `--queue-arn` and `--role-arn` are given to hold none (the service default, no queue, STS_ROLE_ARN's role). */
export const NONE = 'none';

const OBO_MODES: readonly OnBehalfOfMode[] = ['forbidden', 'optional', 'required'];

/** The on-behalf-of settings of a client whose users' tokens are refused: none of their details. */
const OBO_FORBIDDEN: OnBehalfOfSettings = {
  mode: 'forbidden',
  issuer: null,
  jwks: null,
  audience: null,
  emailClaim: 'email',
};

/** The on-behalf-of options given, each read alone. */
interface OnBehalfOfChange {
  readonly mode?: OnBehalfOfMode | undefined;
  readonly issuer?: string | undefined;
  readonly jwks?: string | undefined;
  readonly audience?: string | undefined;
  readonly emailClaim?: string | undefined;
}

/** What the options change of a client, each value checked by its own rule; null removes. */
export interface ClientChange {
  readonly permissions?: readonly Permission[] | undefined;
  readonly rateLimit?: string | null | undefined;
  readonly queueArn?: string | null | undefined;
  readonly roleArn?: string | null | undefined;
  readonly onBehalfOf: OnBehalfOfChange;
  readonly redact?: readonly RedactableField[] | undefined;
  readonly limitedAccess?: LimitedAccessSetting | undefined;
}

/** The option `setting` read by `read` when given; a domain rule's error is a usage error naming the option. */
function optionValue<T>(
  given: ClientOptionsGiven,
  setting: Setting,
  read: (raw: string) => T,
): T | undefined {
  const raw = given[setting];
  return raw === undefined ? undefined : usage(() => read(raw), CLIENT_OPTIONS[setting]);
}

/** `read`, or null for `none`. */
const orNone =
  <T>(read: (raw: string) => T) =>
  (raw: string): T | null =>
    raw.trim() === NONE ? null : read(raw);

/** An ARN option's value, or null for `none`: an ARN `tryParse` takes, else a usage error with its example. */
const arnOption = (
  given: ClientOptionsGiven,
  setting: 'queueArn' | 'roleArn',
  kind: string,
  arn: { example: string; tryParse(raw: string): string | undefined },
): string | null | undefined =>
  optionValue(
    given,
    setting,
    orNone((value) => {
      if (arn.tryParse(value) === undefined)
        throw new UsageError(`${CLIENT_OPTIONS[setting]} must be ${kind}, e.g. ${arn.example}, or ${NONE}`);
      return value;
    }),
  );

/**
 * What the options change, each value checked by its rule (a usage error naming the option),
 * before any store is opened. What the on-behalf-of options need of each other once merged
 * with what is held is checked by {@link changedClient}.
 */
export function clientChangeOf(given: ClientOptionsGiven): ClientChange {
  const queueArn = arnOption(given, 'queueArn', 'an SQS queue ARN', QueueArn);
  const roleArn = arnOption(given, 'roleArn', 'an IAM role ARN', RoleArn);
  // The role is the one POST /token assumes for the queue: it goes with the queue.
  if (queueArn === null && typeof roleArn === 'string')
    throw new UsageError(
      `--role-arn is the role assumed for the queue: it cannot be given with --queue-arn ${NONE}`,
    );
  return {
    permissions: optionValue(given, 'permissions', parsePermissionList),
    queueArn,
    roleArn,
    rateLimit: optionValue(
      given,
      'rateLimit',
      orNone((raw) => {
        parseRateLimit(raw);
        return raw;
      }),
    ),
    onBehalfOf: {
      mode: optionValue(given, 'obo', (raw) => {
        const mode = OBO_MODES.find((m) => m === raw);
        if (mode === undefined) throw new UsageError('--obo must be forbidden, optional or required');
        return mode;
      }),
      issuer: given.oboIssuer,
      // Refused here, not at the first request: the verifier reads the keys from it.
      jwks: optionValue(given, 'oboJwks', (raw) => {
        const problem = jwksSourceProblem(raw);
        if (problem !== undefined) throw new Error(problem);
        return raw;
      }),
      audience: given.oboAudience,
      emailClaim: given.oboEmailClaim,
    },
    redact: optionValue(given, 'redact', parseRedactList),
    limitedAccess: optionValue(given, 'limitedAccess', parseLimitedAccessSetting),
  };
}

/** `given`, unless it was not given (undefined): then `held`. A null given is kept: it removes. */
const givenOr = <T>(given: T | undefined, held: T): T => (given === undefined ? held : given);

/**
 * The on-behalf-of settings `change` makes of `held`: the mode given, else the one held. A
 * client forbidden them holds none of their details (`--obo forbidden` clears them; giving one
 * is a usage error); an optional or required one holds the issuer, JWKS and audience given,
 * else those held, and all three are needed.
 */
function onBehalfOfChanged(held: OnBehalfOfSettings, change: OnBehalfOfChange): OnBehalfOfSettings {
  const { mode = held.mode, ...details } = change;
  if (mode === 'forbidden') {
    if (Object.values(details).some((v) => v !== undefined))
      throw new UsageError(
        '--obo-issuer, --obo-jwks, --obo-audience and --obo-email-claim need --obo optional or required',
      );
    return OBO_FORBIDDEN;
  }
  const needed = {
    issuer: givenOr(details.issuer, held.issuer),
    jwks: givenOr(details.jwks, held.jwks),
    audience: givenOr(details.audience, held.audience),
  };
  const missing = Object.entries(needed)
    .filter(([, v]) => v === null)
    .map(([k]) => `--obo-${k}`);
  if (missing.length > 0) throw new UsageError(`--obo ${mode} needs ${missing.join(', ')}`);
  return { mode, ...needed, emailClaim: givenOr(details.emailClaim, held.emailClaim) };
}

/**
 * The client `change` makes of `held`: each setting given in place of the one held, the rest
 * kept (its suspension always); the on-behalf-of settings as {@link onBehalfOfChanged} makes
 * them when any of theirs is given. `--queue-arn none` removes the role with the queue.
 */
export function changedClient(held: Client, change: ClientChange): Client {
  return {
    ...held,
    permissions: givenOr(change.permissions, held.permissions),
    rateLimit: givenOr(change.rateLimit, held.rateLimit),
    queueArn: givenOr(change.queueArn, held.queueArn),
    roleArn: givenOr(change.roleArn, change.queueArn === null ? null : held.roleArn),
    onBehalfOf: Object.values(change.onBehalfOf).some((v) => v !== undefined)
      ? onBehalfOfChanged(held.onBehalfOf, change.onBehalfOf)
      : held.onBehalfOf,
    redact: givenOr(change.redact, held.redact),
    limitedAccess: givenOr(change.limitedAccess, held.limitedAccess),
  };
}

/** A client as `clients add` starts it, before its options: no permissions, nothing else held. */
export const newClient = (id: string): Client => ({
  id,
  permissions: [],
  suspended: false,
  rateLimit: null,
  queueArn: null,
  roleArn: null,
  onBehalfOf: OBO_FORBIDDEN,
  redact: [],
  limitedAccess: DEFAULT_LIMITED_ACCESS_SETTING,
});
