/**
 * The witness's one judgement (C2SP tlog-witness v1.0.0, add-checkpoint): whether a log's new
 * checkpoint extends the latest one this witness cosigned for it, and if so, its
 * cosignature/v1 over it, the record moved on first. Each answer is the spec's:
 *
 * - 400: a body that is not `old N`, proof lines, a blank line and a checkpoint; a checkpoint
 *   note that is not one; `old` after the checkpoint's size.
 * - 403: no signature on the checkpoint by a key this witness trusts for its origin, or one by
 *   such a key that does not verify.
 * - 404: an origin this witness does not cosign.
 * - 409: `old` is not the size it holds for the log (0 when it never cosigned one); the answer
 *   carries that size.
 * - 422: a proof that does not show the checkpoint extending the one held; a proof at all from
 *   size 0; the size held with another root; a size-0 checkpoint whose root is not the empty
 *   tree's.
 * - 200: the cosignature line, once the checkpoint is recorded as the latest.
 *
 * The check and the write are one step: the record moves only if it is still the one checked
 * against (the state's compare-and-set), else the submission is judged again against the
 * record that won.
 */
import type { WitnessedCheckpoint, WitnessState } from '../../ports/witness-state.js';
import { cosignatureLine } from '../../tlog/cosignature.js';
import { type Hash, type Sha256, sameHash, verifyConsistency } from '../../tlog/merkle.js';
import {
  hex8,
  type NoteVerifier,
  noteTextOf,
  openCheckpointNote,
  signatureLineParts,
  signatureLinesOf,
  verifyWith,
} from '../../tlog/note.js';
import { parseAddCheckpointBody } from '../../tlog/witness-protocol.js';

/** The witness's own key: what signs its cosignatures. */
export interface Cosigner {
  readonly name: string;
  readonly keyId: number;
  sign(message: Uint8Array): Uint8Array;
}

/** What the judgement needs: the logs it trusts (keys that verify their own signatures), its record, its key and a clock. */
export interface WitnessParts {
  readonly sha256: Sha256;
  /** Each origin cosigned, with the keys its checkpoints may be signed by. */
  readonly logs: ReadonlyMap<string, readonly NoteVerifier[]>;
  readonly state: WitnessState;
  readonly cosigner: Cosigner;
  /** Now, in whole POSIX seconds: the cosignature's timestamp. */
  readonly now: () => number;
}

/** What a submission is answered, with what the log line and the metrics need. */
export type WitnessAnswer =
  | { readonly status: 200; readonly cosignature: string; readonly origin: string; readonly size: number }
  | { readonly status: 409; readonly held: number; readonly origin: string }
  | {
      readonly status: 400 | 403 | 404 | 422;
      readonly reason: string;
      readonly origin?: string;
      /** For a 422: the signed checkpoint refused, which may be evidence of a log's misbehaviour. */
      readonly evidence?: string;
    };

/** How often a submission is judged again after another moved the record first, before it is told the record's size. */
const MAX_ROUNDS = 4;

const refuse = (status: 400 | 403 | 404 | 422, reason: string, origin?: string): WitnessAnswer => ({
  status,
  reason,
  ...(origin !== undefined ? { origin } : {}),
});

/**
 * The signature lines of `note` by the keys in `keys`, the first of each key (the one a note's
 * reader checks): what the witness keeps of the log's signatures beside its own.
 */
function logSignatures(note: string, keys: readonly NoteVerifier[]): string[] {
  const seen = new Set<string>();
  return signatureLinesOf(note).filter((line) => {
    const parts = signatureLineParts(line);
    if (parts === undefined) return false;
    const id = `${parts.name}+${hex8(parts.keyId)}`;
    if (seen.has(id) || !keys.some((k) => k.name === parts.name && k.keyId === parts.keyId)) return false;
    seen.add(id);
    return true;
  });
}

/** The submission judged against the record `held` (undefined: none), without writing: a refusal, or undefined to cosign. */
function judge(
  sha256: Sha256,
  held: WitnessedCheckpoint | undefined,
  submitted: { readonly origin: string; readonly old: number; readonly size: number; readonly root: Hash },
  proof: readonly Hash[],
): WitnessAnswer | undefined {
  const { origin, old, size, root } = submitted;
  const heldSize = held?.size ?? 0;
  if (old !== heldSize) return { status: 409, held: heldSize, origin };
  if (held === undefined || old === 0) return undefined;
  if (old === size) {
    if (!sameHash(held.root, root)) return refuse(422, `size ${size} was cosigned with another root`, origin);
    if (proof.length > 0) return refuse(422, 'a proof between equal sizes is empty', origin);
    return undefined;
  }
  if (!verifyConsistency(sha256, old, size, held.root, root, proof))
    return refuse(422, `the proof does not show size ${size} extending size ${old} held`, origin);
  return undefined;
}

/** Judges one add-checkpoint body (the request's whole text) and, when it passes, records and cosigns it. */
export async function addCheckpoint(parts: WitnessParts, body: string): Promise<WitnessAnswer> {
  const request = parseAddCheckpointBody(body);
  if ('invalid' in request) return refuse(400, request.invalid);
  const { old, proof, note } = request;
  const origin = note.slice(0, Math.max(0, note.indexOf('\n')));
  const keys = parts.logs.get(origin);
  if (keys === undefined) return refuse(404, 'this witness cosigns no log of that origin');
  const opened = openCheckpointNote(note, keys, verifyWith(keys));
  if (!opened.ok) {
    if (opened.why === 'no-key')
      return refuse(
        403,
        `no signature on the checkpoint is by a key this witness trusts for ${origin}`,
        origin,
      );
    return refuse(opened.why === 'bad-signature' ? 403 : 400, opened.reason, origin);
  }
  const { size, root } = opened.body;
  // An opened note has its text: the lines the log signed, which the cosignature signs too.
  const text = noteTextOf(note) as string;
  const withEvidence = (answer: WitnessAnswer): WitnessAnswer =>
    answer.status === 422 ? { ...answer, evidence: note } : answer;
  if (old > size) return refuse(400, `old ${old} is after the checkpoint's size ${size}`, origin);
  if (size === 0 && !sameHash(root, parts.sha256()))
    return withEvidence(refuse(422, "a checkpoint of size 0 has the empty tree's root", origin));
  if (old === 0 && proof.length > 0)
    return withEvidence(refuse(422, 'no proof is needed from size 0, and none may be given', origin));
  let held = await parts.state.latest(origin);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const refusal = judge(parts.sha256, held, { origin, old, size, root }, proof);
    if (refusal !== undefined) return withEvidence(refusal);
    const cosignature = cosignatureLine(parts.cosigner, text, parts.now());
    const cosigned = `${text}\n${[...logSignatures(note, keys), cosignature.slice(0, -1)].join('\n')}\n`;
    const moved = await parts.state.advance(origin, held && { size: held.size, root: held.root }, {
      size,
      root,
      note: cosigned,
    });
    if (moved === true) return { status: 200, cosignature, origin, size };
    held = moved;
  }
  return { status: 409, held: held?.size ?? 0, origin };
}
