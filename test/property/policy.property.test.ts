import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { sha256Bytes } from '../../src/adapters/shared/sha256.js';
import { verifierKeyLine } from '../../src/tlog/note.js';
import { describeQuorum, parseWitnessPolicy, type WitnessPolicy } from '../../src/tlog/policy.js';
import { hostile } from './arbitraries.js';
import { keyName } from './note-arbitraries.js';
import { runs, TIMEOUT } from './runs.js';

/**
 * C2SP tlog-policy files (src/tlog/policy.ts parseWitnessPolicy), as an operator writes one for
 * `serve`, `witness serve` or `audit verify --policy`. The writer here is the spec's grammar:
 * items separated by spaces and tabs, `#` comments and empty lines anywhere.
 */

interface Model {
  readonly logs: readonly { readonly vkey: string; readonly url?: string | undefined }[];
  readonly witnesses: readonly {
    readonly name: string;
    readonly vkey: string;
    readonly url?: string | undefined;
  }[];
  readonly groups: readonly {
    readonly name: string;
    readonly threshold: string;
    readonly members: readonly string[];
  }[];
  readonly quorum: string;
}

const key = (type: number) =>
  fc
    .tuple(keyName, fc.uint8Array({ minLength: 32, maxLength: 32 }))
    .map(([name, raw]) => verifierKeyLine(sha256Bytes, name, raw, type));
const url = fc.option(fc.webUrl({ validSchemes: ['https', 'http'] }), { nil: undefined });
/** A name in the policy: no space, tab or control character, not a comment, not `none`. */
const policyName = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 12 })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the format forbids them
  .filter((n) => !/[ \t\u0000-\u001f\u007f]/.test(n) && !n.startsWith('#') && n !== 'none');

/** A policy: its logs and witnesses, groups over earlier names (each a member once), and a quorum. */
const model: fc.Arbitrary<Model> = fc
  .record({
    logs: fc.uniqueArray(fc.record({ vkey: key(0x01), url }), { maxLength: 3, selector: (l) => l.vkey }),
    witnesses: fc.uniqueArray(fc.record({ name: policyName, vkey: key(0x04), url }), {
      maxLength: 5,
      selector: (w) => w.name,
    }),
    groupNames: fc.uniqueArray(policyName, { maxLength: 3 }),
    picks: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { minLength: 3, maxLength: 3 }),
    quorumPick: fc.nat(),
  })
  .map(({ logs, witnesses, groupNames, picks, quorumPick }) => {
    const used = new Set(witnesses.map((w) => w.name));
    const free: string[] = witnesses.map((w) => w.name);
    const groups: { name: string; threshold: string; members: string[] }[] = [];
    for (const [i, name] of groupNames.entries()) {
      if (used.has(name) || free.length === 0) continue;
      const [take, kind, k] = picks[i] ?? [0, 0, 0];
      const members = free.splice(0, 1 + (take % free.length));
      const threshold = ['all', 'any', String(1 + (k % members.length))][kind % 3] as string;
      groups.push({ name, threshold, members });
      used.add(name);
      free.push(name);
    }
    const names = ['none', ...used];
    return { logs, witnesses, groups, quorum: names[quorumPick % names.length] as string };
  });

const layout = fc.record({
  gaps: fc.array(fc.constantFrom(' ', '\t', '  ', ' \t '), { minLength: 40, maxLength: 40 }),
  fillers: fc.array(fc.constantFrom('', '# a comment', '   ', '\t# indented comment', '#'), {
    minLength: 12,
    maxLength: 12,
  }),
});

/** The policy's text, each item line between fillers, its items separated by `gaps`; and each item's line. */
function write(m: Model, { gaps, fillers }: { gaps: readonly string[]; fillers: readonly string[] }) {
  let g = 0;
  const gap = () => gaps[g++ % gaps.length] as string;
  const items = [
    ...m.logs.map((l) => ['log', l.vkey, ...(l.url ? [l.url] : [])]),
    ...m.witnesses.map((w) => ['witness', w.name, w.vkey, ...(w.url ? [w.url] : [])]),
    ...m.groups.map((x) => ['group', x.name, x.threshold, ...x.members]),
    ['quorum', m.quorum],
  ];
  const lines: string[] = [];
  const at: number[] = [];
  for (const [i, fields] of items.entries()) {
    const filler = fillers[i % fillers.length] as string;
    if (filler !== '') lines.push(filler);
    lines.push((i % 3 === 0 ? gap() : '') + fields.join(gap()) + (i % 4 === 0 ? gap() : ''));
    at.push(lines.length);
  }
  return { text: lines.join('\n') + (gaps.length % 2 === 0 ? '\n' : ''), at };
}

/** What a model's quorum is, in describeQuorum's words. */
function described(m: Model, name: string): string {
  if (name === 'none') return 'none';
  const group = m.groups.find((x) => x.name === name);
  if (group === undefined) return name;
  const k =
    group.threshold === 'all'
      ? group.members.length
      : group.threshold === 'any'
        ? 1
        : Number(group.threshold);
  return `${k} of (${group.members.map((member) => described(m, member)).join(', ')})`;
}

/** A policy read back into the text's items (for writing it again). */
const modelOf = (p: WitnessPolicy, quorum: string, groups: Model['groups']): Model => ({
  logs: p.logs.map((l) => ({ vkey: l.vkey, ...(l.url ? { url: l.url } : {}) })),
  witnesses: p.witnesses.map((w) => ({ name: w.name, vkey: w.vkey, ...(w.url ? { url: w.url } : {}) })),
  groups,
  quorum,
});

describe('witness policies', () => {
  test.prop([model, layout], runs(150))(
    'a policy written with any spacing and comments reads back: its logs, witnesses, quorum and each item’s line',
    (m, l) => {
      const { text, at } = write(m, l);
      const read = parseWitnessPolicy(sha256Bytes, text);
      if ('invalid' in read) throw new Error(`refused: ${read.invalid}\n${text}`);
      expect(read.logs.map((x) => ({ vkey: x.vkey, url: x.url, line: x.line }))).toEqual(
        m.logs.map((x, i) => ({ vkey: x.vkey, url: x.url, line: at[i] })),
      );
      expect(read.witnesses.map((x) => ({ name: x.name, vkey: x.vkey, url: x.url, line: x.line }))).toEqual(
        m.witnesses.map((x, i) => ({ ...x, url: x.url, line: at[m.logs.length + i] })),
      );
      expect(describeQuorum(read.quorum)).toBe(described(m, m.quorum));
      // Written again from what was read, it reads the same.
      const again = parseWitnessPolicy(sha256Bytes, write(modelOf(read, m.quorum, m.groups), l).text);
      expect(again).toEqual(read);
    },
    TIMEOUT,
  );

  test.prop(
    [
      hostile(
        fc.tuple(model, layout).map(([m, l]) => write(m, l).text),
        800,
      ),
    ],
    runs(1500),
  )(
    'any text: a policy or the first problem named by its line, never a throw',
    (text) => {
      const read = parseWitnessPolicy(sha256Bytes, text);
      if ('invalid' in read) {
        expect(read.invalid).toMatch(/^line [1-9][0-9]*: \S|^the policy has no quorum line/);
        return;
      }
      expect(['none', 'witness', 'group']).toContain(read.quorum.kind);
    },
    TIMEOUT,
  );
});
