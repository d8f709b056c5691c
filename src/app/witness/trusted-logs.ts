/**
 * The logs a witness cosigns (`WITNESS_LOGS`): a file of C2SP tlog-policy `log <vkey> [<url>]`
 * lines, `#` comments and blank lines, read by the log module's policy parser (the same key
 * checks, duplicates refused, the same messages naming the line). Nothing else: a witness
 * is not handed a quorum or other witnesses, and a `witness`, `group` or `quorum` line here is
 * a file given by mistake (a trail's policy, say), refused rather than half read.
 *
 * A log is known by its origin, its key's name (tlog-policy: the key name is the log's
 * origin line); a log may have several keys (a rotation), each accepted.
 */
import type { Sha256 } from '../../tlog/merkle.js';
import type { NoteVerifierKey } from '../../tlog/note.js';
import { parseWitnessPolicy } from '../../tlog/policy.js';

/** The logs a witness cosigns: each origin, with the keys its checkpoints may be signed by. */
export type TrustedLogs = ReadonlyMap<string, readonly NoteVerifierKey[]>;

/** The first field of a line, as tlog-policy splits one (spaces and tabs). */
const keywordOf = (line: string): string | undefined =>
  line.split(/[ \t]+/).find((field) => field.length > 0);

/** The logs in `text`, or the first problem naming its line (`line 3: ...`). */
export function parseTrustedLogs(sha256: Sha256, text: string): TrustedLogs | { readonly invalid: string } {
  for (const [index, line] of text.split('\n').entries()) {
    const keyword = keywordOf(line);
    if (keyword === undefined || keyword.startsWith('#') || keyword === 'log') continue;
    return {
      invalid: `line ${index + 1}: a witness's logs file holds only "log <vkey> [<url>]" lines, not ${JSON.stringify(keyword.slice(0, 40))}`,
    };
  }
  // The policy parser wants its one quorum line: after every line of the file, so line numbers hold.
  const policy = parseWitnessPolicy(
    sha256,
    `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}quorum none\n`,
  );
  if ('invalid' in policy) return policy;
  if (policy.logs.length === 0)
    return { invalid: 'it names no log: add a line "log <vkey>" for each log to cosign' };
  const logs = new Map<string, NoteVerifierKey[]>();
  for (const { key } of policy.logs) logs.set(key.name, [...(logs.get(key.name) ?? []), key]);
  return logs;
}
