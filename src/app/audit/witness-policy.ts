/**
 * What this application asks of a witness policy beyond its format (decisions §19), and how a
 * checkpoint stands against one: the trail's own key must be among its logs, a witness is
 * reached over https unless it is on this machine, and a checkpoint is witnessed when the
 * policy witnesses whose cosignatures verify meet its quorum.
 */
import {
  fromBase64,
  hex8,
  type NoteVerifier,
  type NoteVerifierKey,
  openNote,
  verifyWith,
} from '../../tlog/note.js';
import { quorumMet, type WitnessPolicy } from '../../tlog/policy.js';

/** What {@link policyProblems} checks a policy against. */
export interface PolicyContext {
  /** The trail's origin: the name of its log key. */
  readonly origin: string;
  /** The trail's log key (its verifier key line, or read), when known: the policy must list this key. */
  readonly logVkey?: string | NoteVerifierKey;
  /** Whether a URL's host, as `URL.hostname` gives it (an IPv6 address in brackets), is this machine: isLoopbackHost. */
  isLoopback(host: string): boolean;
  /** Whether each witness needs a URL: so when `serve` submits checkpoints to them. */
  readonly urlRequired?: boolean;
}

/** The name and key bytes of a note verifier key line (type 0x01), unchecked beyond its form; undefined when it is not one. */
function vkeyParts(line: string): { readonly name: string; readonly publicKey: Uint8Array } | undefined {
  const match = /^([^+]*)\+[0-9a-f]{8}\+(.*)$/.exec(line.trim());
  const bytes = match?.[2] === undefined ? undefined : fromBase64(match[2]);
  if (match?.[1] === undefined || bytes === undefined || bytes.length !== 33 || bytes[0] !== 0x01)
    return undefined;
  return { name: match[1], publicKey: bytes.slice(1) };
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/**
 * What is wrong with `policy` for this trail, each naming its line: no `log` line is the trail's
 * (its origin and, when given, its key); a witness URL is http:// to a host off loopback; a
 * witness has no URL when `urlRequired`. Empty when nothing is.
 */
export function policyProblems(policy: WitnessPolicy, context: PolicyContext): string[] {
  const problems: string[] = [];
  const trailKey = typeof context.logVkey === 'string' ? vkeyParts(context.logVkey) : context.logVkey;
  if (context.logVkey !== undefined && trailKey === undefined)
    problems.push("the trail's log key is not a verifier key line");
  const named = policy.logs.filter((log) => log.key.name === context.origin);
  const ours = named.filter(
    (log) => trailKey === undefined || sameBytes(log.key.publicKey, trailKey.publicKey),
  );
  if (ours.length === 0) {
    if (named.length === 0)
      problems.push(`no log line names this trail's origin ${JSON.stringify(context.origin)}`);
    for (const log of named)
      problems.push(
        `line ${log.line}: the log ${JSON.stringify(context.origin)} has a key that is not this trail's`,
      );
  }
  for (const witness of policy.witnesses) {
    const what = `line ${witness.line}: witness ${JSON.stringify(witness.name)}`;
    if (witness.url === undefined) {
      if (context.urlRequired) problems.push(`${what} has no URL; submitting checkpoints to it needs one`);
      continue;
    }
    const url = new URL(witness.url);
    if (url.protocol === 'http:' && !context.isLoopback(url.hostname))
      problems.push(`${what} is reached over http:// off loopback; use https://`);
  }
  return problems;
}

/** The policy witnesses that cosigned a note: their names, and the one whose cosignature failed. */
export interface Cosigned {
  /** The policy names of the witnesses whose cosignature on the note verifies. */
  readonly witnesses: readonly string[];
  /** The policy name of a witness whose cosignature line (its name and key id) is on the note but does not verify. */
  readonly refused?: string;
  /** Why the note is not a signed note at all, when it is not. */
  readonly malformed?: string;
}

/**
 * Which witnesses of `policy` cosigned `note` (a signed note, its log's signature not checked
 * here): each opened with its key alone, through `verifierOf` (cosigner-keys' cosignerVerifier),
 * so a witness that did not cosign is simply absent and one whose line fails is named.
 */
export function cosignedBy(
  note: string,
  policy: WitnessPolicy,
  verifierOf: (key: NoteVerifierKey) => NoteVerifier,
): Cosigned {
  const witnesses: string[] = [];
  let refused: string | undefined;
  for (const witness of policy.witnesses) {
    const verifier = verifierOf(witness.key);
    const opened = openNote(note, [verifier], verifyWith([verifier]));
    if (opened.ok) {
      if (opened.verifiedBy.includes(`${verifier.name}+${hex8(verifier.keyId)}`))
        witnesses.push(witness.name);
    } else if (opened.why === 'malformed') return { witnesses: [], malformed: opened.reason };
    else if (opened.why === 'bad-signature') refused ??= witness.name;
    // 'no-key': this witness did not cosign.
  }
  return refused === undefined ? { witnesses } : { witnesses, refused };
}

/** Whether `note` is cosigned to `policy`'s quorum, with no policy witness's cosignature failing. */
export function meetsPolicy(
  note: string,
  policy: WitnessPolicy,
  verifierOf: (key: NoteVerifierKey) => NoteVerifier,
): boolean {
  const cosigned = cosignedBy(note, policy, verifierOf);
  return (
    cosigned.refused === undefined &&
    cosigned.malformed === undefined &&
    quorumMet(policy.quorum, new Set(cosigned.witnesses))
  );
}
