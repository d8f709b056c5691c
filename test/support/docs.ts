/**
 * Reading the project's documents as GitHub shows them, for the checks that keep them true:
 * the anchors of their headings, their links, their code blocks; and the metric names of a
 * PromQL expression.
 */

/** A heading's text as GitHub renders it: inline code, emphasis and links reduced to their text. */
const headingText = (raw: string): string =>
  raw
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim();

/** GitHub's anchor for a heading text: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export const slugOf = (text: string): string =>
  headingText(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** Markdown with its fenced code blocks blanked out (a `#` in a shell block is no heading, a link in one no link). */
export const withoutCodeBlocks = (markdown: string): string =>
  markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** The anchors of every heading in a Markdown document, repeated ones numbered as GitHub does (`-1`, `-2`). */
export function headingAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  for (const [, text] of withoutCodeBlocks(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = slugOf(text ?? '');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.push(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The targets of the inline links and images of a Markdown document, outside code. */
export function linkTargets(markdown: string): string[] {
  const text = withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
}

/** The fenced code blocks of a Markdown document, with their info strings. */
export function codeBlocks(markdown: string): { info: string; body: string }[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```\s*$/gm)].map((m) => ({
    info: (m[1] ?? '').trim(),
    body: m[2] ?? '',
  }));
}

const PROMQL_WORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads, in order, each once: identifiers that are not
 * a function call, a keyword, a label (inside `{}` or a grouping), a string or a duration.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/(?<![\w$.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)) {
    const name = m[1] ?? '';
    if (PROMQL_WORDS.has(name.toLowerCase()) || names.includes(name)) continue;
    names.push(name);
  }
  return names;
}
