import { describeQuorum, quorumMet, type WitnessPolicy } from '../../tlog/policy.js';

/**
 * Where this trail stands against what its witnesses hold (issue 67): a trail restored from a
 * backup, or a standby promoted before it had the last commits, is shorter than what the
 * witnesses cosigned, and every answer recorded on it would be on a trail known to be short.
 * A witness's answers say it: a 409 names the size it holds; a 422 to a proof from that size
 * says it holds another tree there.
 */
export type WitnessStanding =
  /** It cosigned this trail's checkpoint, or holds a size this trail's tree extends. */
  | { readonly kind: 'consistent'; readonly holds: number }
  /** It holds more records than this trail's tree has: the trail lost them. */
  | { readonly kind: 'ahead'; readonly holds: number }
  /** It holds `holds` records of another tree: no proof from there to this trail verifies. */
  | { readonly kind: 'forked'; readonly holds: number };

/** A quorum of witnesses holding what this trail cannot extend: why this store must not be served. */
export interface TrailBehind {
  /** The records this store's trail has. */
  readonly storeSize: number;
  /** The most records a witness of the quorum holds. */
  readonly heldSize: number;
  /** Each witness that holds what the trail cannot extend, and what it holds. */
  readonly witnesses: readonly { readonly name: string; readonly standing: WitnessStanding }[];
  /** The policy's quorum, in words. */
  readonly quorum: string;
}

/** The runbook section an operator is sent to. */
export const TRAIL_BEHIND_RUNBOOK = 'docs/operations/runbook.md#casereadauditstorebehindwitnesses';

/**
 * The witnesses holding what this trail cannot extend, when they are a quorum of the policy
 * (one witness alone never is, unless the policy's quorum is that witness); undefined
 * otherwise. A policy whose quorum is `none` asks nothing of its witnesses, so it decides
 * nothing here either.
 */
export function trailBehind(
  policy: WitnessPolicy,
  standings: ReadonlyMap<string, WitnessStanding>,
  storeSize: number,
): TrailBehind | undefined {
  if (policy.quorum.kind === 'none') return undefined;
  const behind = policy.witnesses
    .map((w) => ({ name: w.name, standing: standings.get(w.name) }))
    .filter(
      (w): w is { name: string; standing: WitnessStanding } =>
        w.standing !== undefined && w.standing.kind !== 'consistent',
    );
  if (behind.length === 0 || !quorumMet(policy.quorum, new Set(behind.map((w) => w.name)))) return undefined;
  return {
    storeSize,
    heldSize: Math.max(...behind.map((w) => w.standing.holds)),
    witnesses: behind,
    quorum: describeQuorum(policy.quorum),
  };
}

/** The one message that says so: both sizes, the witnesses, and where the runbook says what to do. */
export function trailBehindMessage(behind: TrailBehind): string {
  const each = behind.witnesses
    .map(({ name, standing }) =>
      standing.kind === 'ahead'
        ? `${name} holds ${standing.holds} records`
        : `${name} holds ${standing.holds} records of another tree`,
    )
    .join(', ');
  return `the audit store's trail has ${behind.storeSize} records, and a quorum of its witnesses (${behind.quorum}) holds what it cannot extend: ${each}. The store was restored from a backup, or failed over to a standby that had not received the last commits, and every answer would be recorded on a trail known to be short; see ${TRAIL_BEHIND_RUNBOOK}`;
}
