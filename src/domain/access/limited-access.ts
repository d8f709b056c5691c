/**
 * Limited access cases (decisions §8). The system of record holds, per case, exclusions
 * (named users who may not see it) and a restriction (only the named users may see it),
 * each with an optional end. Users are on-behalf-of e-mail addresses, compared without
 * regard to case.
 */
/** An ISO 8601 instant with offset, as held (`2027-01-01T00:00:00Z`); compared as an instant. */
export type Instant = string;

export interface Exclusion {
  readonly user: string;
  /** The end of the exclusion; null for none. */
  readonly until: Instant | null;
}

export interface Restriction {
  readonly users: readonly string[];
  readonly until: Instant | null;
}

/** A case's limited-access rules as held: ended rules are kept, and decided on as ended. */
export interface LimitedAccess {
  readonly exclusions: readonly Exclusion[];
  readonly exclusionMessage: string | null;
  readonly restriction: Restriction | null;
  readonly restrictionMessage: string | null;
}

/** What a client acting as itself (no on-behalf-of user) gets on a limited case. */
export const LIMITED_ACCESS_SETTINGS = ['deny', 'allow'] as const;
export type LimitedAccessSetting = (typeof LIMITED_ACCESS_SETTINGS)[number];

export const DEFAULT_LIMITED_ACCESS_SETTING: LimitedAccessSetting = 'deny';

/** `deny` or `allow`; throws `Error` naming the allowed values. */
export function parseLimitedAccessSetting(raw: string): LimitedAccessSetting {
  const setting = LIMITED_ACCESS_SETTINGS.find((value) => value === raw.trim());
  if (setting === undefined) {
    throw new Error(
      `unknown limited-access mode ${JSON.stringify(raw)}; expected one of ${LIMITED_ACCESS_SETTINGS.join(', ')}`,
    );
  }
  return setting;
}

/** Who reads: the verified on-behalf-of user (null when the client acts as itself) and the client's setting. */
export interface Reader {
  readonly user: string | null;
  readonly limitedAccess: LimitedAccessSetting;
}

/**
 * The decision on one case for one reader:
 * - `open`: no active rule concerns this reader (no rules, ended rules, or a user on the list);
 * - `client-enforces`: the case has active rules and the client, acting as itself, is set to
 *   `allow` (it enforces limited access itself): answered, and recorded as such;
 * - `excluded` / `restricted`: refused, with the message the case holds for it (or a
 *   generic one), which never names any user.
 */
export type LimitedAccessDecision =
  | { readonly outcome: 'open' }
  | { readonly outcome: 'client-enforces' }
  | { readonly outcome: 'excluded' | 'restricted'; readonly message: string };

export const GENERIC_EXCLUSION_MESSAGE = 'You are excluded from viewing this case.';
export const GENERIC_RESTRICTION_MESSAGE = 'This case is restricted to named users.';

/**
 * A rule is active while its `until` is null or later than `now`. An `until` that does not
 * read as an instant is taken as no end: what cannot be read is never taken as ended.
 */
export function isActive(until: Instant | null, now: Date): boolean {
  if (until === null) return true;
  const end = Date.parse(until);
  return Number.isNaN(end) || end > now.getTime();
}

const sameUser = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Decides whether `reader` may see a case with these rules at `now`. An exclusion is
 * checked before the restriction: a user both excluded and on the restriction list is
 * excluded. Without a user, a case with any active rule is refused unless the client is set
 * to `allow`; the refusal then uses the restriction's message when a restriction is active.
 */
export function decideLimitedAccess(
  rules: LimitedAccess | null,
  reader: Reader,
  now: Date,
): LimitedAccessDecision {
  if (rules === null) return { outcome: 'open' };
  const exclusions = rules.exclusions.filter((exclusion) => isActive(exclusion.until, now));
  const restriction =
    rules.restriction !== null && isActive(rules.restriction.until, now) ? rules.restriction : null;
  if (exclusions.length === 0 && restriction === null) return { outcome: 'open' };
  const excluded = {
    outcome: 'excluded',
    message: rules.exclusionMessage ?? GENERIC_EXCLUSION_MESSAGE,
  } as const;
  const restricted = {
    outcome: 'restricted',
    message: rules.restrictionMessage ?? GENERIC_RESTRICTION_MESSAGE,
  } as const;
  const { user } = reader;
  if (user === null) {
    if (reader.limitedAccess === 'allow') return { outcome: 'client-enforces' };
    return restriction !== null ? restricted : excluded;
  }
  if (exclusions.some((exclusion) => sameUser(exclusion.user, user))) return excluded;
  if (restriction !== null && !restriction.users.some((named) => sameUser(named, user))) return restricted;
  return { outcome: 'open' };
}
