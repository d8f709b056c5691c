import type { DisclosureList } from '../../ports/disclosures.js';
import { toBase64 } from '../../tlog/note.js';
import type { HeldCase } from '../types.js';

/**
 * The subject access answer's JSON text (decisions §22, §23; ADR 27), as `serve` streams it and
 * `case-read subject-access` prints it, a piece at a time:
 *
 * `{"content":{"crn":…,"case":…,"gaps":[…],"disclosures":[…],"proof":{"checkpoint":…,"hashes":…}}}`
 *
 * `gaps` is always there (empty when the trail lost nothing in the window): the stretches whose
 * audit records were lost from the trail (a restore from backup), each `from` (the last kept
 * record's time, or null from the trail's start), `to` (the break), `recordsLost` and `reason`,
 * as the trail's signed continuation records state them. Known before the first disclosure is
 * read, they are written in the head with the crn and the case, so the disclosures still stream
 * after them. `proof` is there when `disclosures` is not empty: the signed checkpoint every disclosure is
 * proved against, and the base64 of the stored hashes that prove them all, end to end. Should
 * the disclosures' second read fail, the iteration throws before the text is closed: whoever
 * sends it breaks the answer off, never ends it as if complete.
 */
export interface ContentToWrite {
  readonly crn: string;
  readonly case?: HeldCase | null;
  readonly disclosures: DisclosureList;
}

/** A piece of the text, and whether a line may end after it (outside any string). */
interface Piece {
  readonly text: string;
  readonly lineMayEnd: boolean;
}

async function* pieces(content: ContentToWrite): AsyncGenerator<Piece> {
  const head = JSON.stringify({
    crn: content.crn,
    ...(content.case === undefined ? {} : { case: content.case }),
    gaps: content.disclosures.gaps.map(({ from, to, recordsLost, reason }) => ({
      from,
      to,
      recordsLost,
      reason,
    })),
  });
  yield { text: `{"content":${head.slice(0, -1)},"disclosures":[`, lineMayEnd: true };
  const { checkpoint, count } = content.disclosures;
  const proofOpens = `],"proof":{"checkpoint":${JSON.stringify(checkpoint ?? '')},"hashes":"`;
  let first = true;
  let proof = false;
  for await (const part of content.disclosures.parts()) {
    if ('disclosures' in part) {
      if (part.disclosures.length === 0) continue;
      const text = part.disclosures.map((disclosure) => JSON.stringify(disclosure)).join(',');
      yield { text: first ? text : `,${text}`, lineMayEnd: true };
      first = false;
      continue;
    }
    if (!proof) yield { text: proofOpens, lineMayEnd: false };
    proof = true;
    yield { text: toBase64(part.hashes), lineMayEnd: false };
  }
  // One disclosure in a tree of one leaf needs no hash: the checkpoint all the same.
  if (!proof && count > 0) yield { text: proofOpens, lineMayEnd: false };
  yield { text: proof || count > 0 ? '"}}}' : ']}}', lineMayEnd: true };
}

/** The text, a piece at a time, for a stream. */
export async function* contentText(content: ContentToWrite): AsyncGenerator<string> {
  for await (const piece of pieces(content)) yield piece.text;
}

/** The text as lines, for a terminal or a file: a batch of disclosures a line, and the proof on one. */
export async function* contentLines(content: ContentToWrite): AsyncGenerator<string> {
  let line = '';
  for await (const piece of pieces(content)) {
    line += piece.text;
    if (piece.lineMayEnd) {
      yield line;
      line = '';
    }
  }
}
