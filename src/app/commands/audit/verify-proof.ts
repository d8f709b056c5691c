// `audit verify-proof` (decisions §14, §19): one record's entry shown, offline, to be a leaf of
// the tree a checkpoint of the log signs, that checkpoint cosigned by a policy's quorum when
// asked. No store, no network.
import { leafHash, verifyInclusion } from '../../../tlog/merkle.js';
import { openCheckpointNote } from '../../../tlog/note.js';
import { parseTlogProof } from '../../../tlog/tlog-proof.js';
import { quorumOf, type Witnessing, witnessingOf, witnessList } from '../../audit/witnessed.js';
import { sha256Bytes, verifyNoteSignature } from '../../composition/audit-keys.js';
import { CommandError, EXIT } from '../exit.js';
import { type Io, report } from '../io.js';
import { type PolicyGiven, readFile, trailPolicyOf, verifierKeyOf } from './options.js';

/**
 * `audit verify-proof PROOF ENTRY --vkey VKEY [--policy FILE]`: the proof's checkpoint is
 * signed by the key and names the key's log, and the entry's leaf hash with the proof's hashes
 * makes its root; with `--policy`, the checkpoint also carries a quorum of the policy's
 * witnesses' cosignatures, each verifying (decisions §19). Offline: no store, no network.
 * Exit 1 says which check failed.
 */
export async function verifyProof(
  proofPath: string,
  entryPath: string,
  values: PolicyGiven & { readonly vkey: string; readonly json?: boolean | undefined },
  io: Io,
): Promise<number> {
  const key = verifierKeyOf(values.vkey);
  const check = await trailPolicyOf(values.policy, [key]);
  const proof = parseTlogProof(readFile('PROOF', proofPath).toString('utf8'));
  if ('invalid' in proof)
    throw new CommandError(`${proofPath} is not a c2sp.org/tlog-proof@v1: ${proof.invalid}`);
  const opened = openCheckpointNote(proof.checkpoint, [key], verifyNoteSignature);
  if (!opened.ok) throw new CommandError(`the proof's checkpoint: ${opened.reason}`);
  const { body } = opened;
  if (body.origin !== key.name) {
    throw new CommandError(`the proof's checkpoint is of the log ${body.origin}, not ${key.name}`);
  }
  let witnessed: Witnessing | undefined;
  if (check !== undefined) {
    witnessed = witnessingOf(proof.checkpoint, check);
    if (!witnessed.met) {
      throw new CommandError(
        `the proof's checkpoint (${body.size} records) is not witnessed: ${witnessed.refused ?? `it does not meet ${quorumOf(check)}: cosigned by ${witnessList(witnessed.witnesses)}`}`,
      );
    }
  }
  const leaf = leafHash(sha256Bytes, readFile('ENTRY', entryPath));
  if (!verifyInclusion(sha256Bytes, proof.index, body.size, leaf, proof.hashes, body.root)) {
    throw new CommandError(
      `the entry is not leaf ${proof.index} of the tree of ${body.size} the checkpoint signs: the entry, or the proof, was changed`,
    );
  }
  report(
    io,
    values.json,
    {
      ok: true,
      origin: body.origin,
      index: proof.index,
      size: body.size,
      ...(witnessed === undefined ? {} : { witnesses: witnessed.witnesses }),
    },
    `proof verified: the entry is leaf ${proof.index} (record ${proof.index + 1}) of ${body.origin}, in its tree of ${body.size} signed by ${opened.verifiedBy.join(', ')}${check !== undefined && witnessed !== undefined ? `, cosigned by ${witnessList(witnessed.witnesses)} (${quorumOf(check)} met)` : ''}`,
  );
  return EXIT.ok;
}
