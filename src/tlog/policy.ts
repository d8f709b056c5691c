/**
 * C2SP tlog-policy (decisions §19): which logs a checkpoint may be signed by, which witnesses
 * there are, and the quorum of them that must cosign it before a reader trusts it.
 *
 *     log <vkey> [<url>]
 *     witness <name> <vkey> [<url>]
 *     group <name> all|any|<k> <name>...
 *     quorum <name>|none
 *
 * Items are separated by spaces and tabs; empty lines and `#` comments are ignored; a group or
 * the quorum names only what earlier lines defined; each name is a group member once at most.
 * Log keys are note keys (type 0x01), witness keys cosigner keys (type 0x04, cosignature.ts).
 */
import { parseCosignerKey } from './cosignature.js';
import type { Sha256 } from './merkle.js';
import { type NoteVerifierKey, parseVerifierKey, publicKeyHex } from './note.js';

/** A `log` line: a log whose signature the policy accepts. */
export interface PolicyLog {
  /** The verifier key line as the policy writes it. */
  readonly vkey: string;
  readonly key: NoteVerifierKey;
  readonly url?: string;
  /** The policy line (from 1) that defines it. */
  readonly line: number;
}

/** A `witness` line: a cosigner the quorum may count, by its name in the policy. */
export interface PolicyWitness {
  /** The witness's name in the policy (not necessarily its key's name). */
  readonly name: string;
  /** The verifier key line as the policy writes it. */
  readonly vkey: string;
  readonly key: NoteVerifierKey;
  /** Its submission prefix (tlog-witness), where a log asks it to cosign. */
  readonly url?: string;
  readonly line: number;
}

/** The rule a set of cosigning witnesses must meet: none, one witness, or k of a group's members. */
export type QuorumRule =
  | { readonly kind: 'none' }
  | { readonly kind: 'witness'; readonly name: string }
  | {
      readonly kind: 'group';
      readonly name: string;
      readonly k: number;
      readonly members: readonly QuorumRule[];
    };

/** A policy read: its logs, its witnesses, and its quorum. */
export interface WitnessPolicy {
  readonly logs: readonly PolicyLog[];
  readonly witnesses: readonly PolicyWitness[];
  readonly quorum: QuorumRule;
}

/** A policy line that is not one, as `line N: what`. */
class PolicyProblem {
  constructor(readonly invalid: string) {}
}

/** The name no witness or group may take: the quorum that needs no cosignature. */
const NONE = 'none';

/** Whether `line` holds a character the format does not allow: a control character but tab, or DEL. */
function hasForbiddenCharacter(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

/** Whether `url` is an absolute http or https URL. */
function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** How the key of each kind of line is read (a log's a note key, a witness's a cosigner key), and the other kind it is not. */
const KEY_KINDS = {
  log: {
    read: parseVerifierKey,
    other: parseCosignerKey,
    is: 'a note key (type 0x01)',
    not: 'a cosigner key (0x04)',
  },
  witness: {
    read: parseCosignerKey,
    other: parseVerifierKey,
    is: 'a cosigner key (type 0x04)',
    not: 'a note key (0x01)',
  },
} as const;

/**
 * The policy in `text`, or the first problem naming its line (`line 4: ...`): a malformed line,
 * an unknown keyword, a character the format forbids, a name used before it is defined or
 * defined twice, `none` as a member, a member listed twice, a duplicate log or witness key, k out
 * of range, a witness key not of type 0x04, a log key not of type 0x01, no or two quorum lines.
 * URLs are only checked to be absolute http(s) URLs here; the https-off-loopback rule is the
 * application's.
 */
export function parseWitnessPolicy(
  sha256: Sha256,
  text: string,
): WitnessPolicy | { readonly invalid: string } {
  try {
    return parse(sha256, text);
  } catch (error) {
    if (error instanceof PolicyProblem) return { invalid: error.invalid };
    throw error;
  }
}

function parse(sha256: Sha256, text: string): WitnessPolicy {
  const logs: PolicyLog[] = [];
  const witnesses: PolicyWitness[] = [];
  /** Every name defined so far (witnesses and groups share one namespace), with its rule. */
  const names = new Map<string, QuorumRule>();
  /** The names already listed as a group member, each with its group: a name is a member once (as sigsum-go's policy). */
  const members = new Map<string, string>();
  /** The keys listed so far, of logs and of witnesses (by hex). */
  const keysListed = { log: new Set<string>(), witness: new Set<string>() };
  let quorum: QuorumRule | undefined;
  const lines = text.split('\n');
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    const fail: (what: string) => never = (what) => {
      throw new PolicyProblem(`line ${line}: ${what}`);
    };
    if (hasForbiddenCharacter(raw)) fail('it holds a control character (only tab and newline are allowed)');
    const fields = raw.split(/[ \t]+/).filter((field) => field.length > 0);
    const [keyword, ...args] = fields;
    if (keyword === undefined || keyword.startsWith('#')) continue;
    const url = (value: string): string => {
      if (!isHttpUrl(value)) fail(`${JSON.stringify(value)} is not an absolute http(s) URL`);
      return value;
    };
    const newName = (name: string): string => {
      if (name === NONE) fail('"none" is predefined; nothing else may take that name');
      if (names.has(name)) fail(`${JSON.stringify(name)} is already defined`);
      return name;
    };
    /** The key of a log or witness line: of its kind, and not one another line of that kind lists. */
    const keyOf = (kind: keyof typeof KEY_KINDS, vkey: string): NoteVerifierKey => {
      const { read, other, is, not } = KEY_KINDS[kind];
      const key = read(sha256, vkey);
      if ('invalid' in key) {
        const isOther = !('invalid' in other(sha256, vkey));
        fail(isOther ? `a ${kind} key is ${is}, not ${not}` : `the ${kind} key: ${key.invalid}`);
      }
      if (keysListed[kind].has(publicKeyHex(key))) fail(`a ${kind} with this key is already listed`);
      keysListed[kind].add(publicKeyHex(key));
      return key;
    };
    switch (keyword) {
      case 'log': {
        const [vkey, address, ...extra] = args;
        if (vkey === undefined || extra.length > 0) fail('a log line is "log <vkey> [<url>]"');
        const key = keyOf('log', vkey);
        logs.push({ vkey: vkey, key, ...(address === undefined ? {} : { url: url(address) }), line });
        break;
      }
      case 'witness': {
        const [name, vkey, address, ...extra] = args;
        if (name === undefined || vkey === undefined || extra.length > 0)
          fail('a witness line is "witness <name> <vkey> [<url>]"');
        newName(name);
        const key = keyOf('witness', vkey);
        witnesses.push({
          name: name,
          vkey: vkey,
          key,
          ...(address === undefined ? {} : { url: url(address) }),
          line,
        });
        names.set(name, { kind: 'witness', name: name });
        break;
      }
      case 'group': {
        const [name, threshold, ...listed] = args;
        if (name === undefined || threshold === undefined || listed.length === 0)
          fail('a group line is "group <name> all|any|<k> <name>..."');
        newName(name);
        const rules = listed.map((member) => {
          if (member === NONE) fail('"none" cannot be a group member');
          const rule = names.get(member);
          if (rule === undefined) fail(`${JSON.stringify(member)} is not defined on an earlier line`);
          const parent = members.get(member);
          if (parent !== undefined)
            fail(
              `${JSON.stringify(member)} is already a member of ${JSON.stringify(parent)}; a name is a member once`,
            );
          members.set(member, name);
          return rule;
        });
        let k: number;
        if (threshold === 'all') k = rules.length;
        else if (threshold === 'any') k = 1;
        else if (/^(0|[1-9][0-9]{0,8})$/.test(threshold)) k = Number(threshold);
        else fail(`the threshold ${JSON.stringify(threshold)} is not all, any or a decimal number`);
        if (k < 1 || k > rules.length)
          fail(`the threshold ${k} is not between 1 and its ${rules.length} members`);
        names.set(name, { kind: 'group', name: name, k, members: rules });
        break;
      }
      case 'quorum': {
        const [name, ...extra] = args;
        if (name === undefined || extra.length > 0) fail('a quorum line is "quorum <name>"');
        if (quorum !== undefined) fail('a policy has one quorum line; this is a second');
        const rule = name === NONE ? { kind: 'none' as const } : names.get(name);
        if (rule === undefined) fail(`${JSON.stringify(name)} is not defined on an earlier line`);
        quorum = rule;
        break;
      }
      default:
        fail(`unknown keyword ${JSON.stringify(keyword.slice(0, 40))} (log, witness, group or quorum)`);
    }
  }
  if (quorum === undefined)
    throw new PolicyProblem('the policy has no quorum line ("quorum none" asks for none)');
  return { logs, witnesses, quorum };
}

/** Whether the witnesses named in `cosignedBy` (policy witness names) meet `quorum`. */
export function quorumMet(quorum: QuorumRule, cosignedBy: ReadonlySet<string>): boolean {
  switch (quorum.kind) {
    case 'none':
      return true;
    case 'witness':
      return cosignedBy.has(quorum.name);
    case 'group':
      return quorum.members.filter((member) => quorumMet(member, cosignedBy)).length >= quorum.k;
  }
}

/** The quorum in words for messages: `none`, `w1`, `2 of (w1, w2, w3)`, nested alike. */
export function describeQuorum(quorum: QuorumRule): string {
  switch (quorum.kind) {
    case 'none':
      return 'none';
    case 'witness':
      return quorum.name;
    case 'group':
      return `${quorum.k} of (${quorum.members.map(describeQuorum).join(', ')})`;
  }
}
