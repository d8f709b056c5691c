/**
 * The witness policy file (decisions §19, C2SP tlog-policy), read one way for `serve`
 * (`AUDIT_WITNESS_POLICY`) and for the audit commands (`--policy FILE`): by the shared reader
 * (opened without blocking, a regular file judged on the descriptor opened: a FIFO, a
 * directory or a device is refused, never waited on), of a bounded size, parsed by the log
 * module. What the policy then asks of the trail (its `log` line is the trail's, its
 * witnesses' URLs) is the caller's to check.
 */
import { readRegularFileSync } from '../../adapters/shared/named-files.js';
import { sha256Bytes } from '../../adapters/shared/sha256.js';
import { parseWitnessPolicy, type WitnessPolicy } from '../../tlog/policy.js';
import { ConfigError } from '../config-error.js';

/** `audit verify --policy`, …: a cosignature checked against a witness's key (Ed25519, node:crypto). */
export { cosignerVerifier } from '../../adapters/crypto/cosigner-keys.js';

/** Most of a policy file: a few dozen lines of keys and URLs; 1 MiB as the audit commands' files. */
export const MAX_POLICY_BYTES = 1024 * 1024;

/**
 * The policy in the file at `path`, named in messages by `what` (`--policy`, or a variable
 * followed by a colon, `AUDIT_WITNESS_POLICY:`, as the audit commands name a file): a ConfigError
 * naming the file, and the line at fault, when it cannot be read, is not a regular file, is over
 * {@link MAX_POLICY_BYTES}, is not UTF-8, or is not a policy.
 */
export function readWitnessPolicyFile(path: string, what: string): WitnessPolicy {
  const refused = (why: string) => new ConfigError([`${what} ${path}${why}`]);
  const { bytes } = readRegularFileSync(what, path, (message) => new ConfigError([message]), {
    maxBytes: MAX_POLICY_BYTES,
  });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refused(': it is not UTF-8 text');
  }
  const policy = parseWitnessPolicy(sha256Bytes, text);
  if ('invalid' in policy) throw refused(`: ${policy.invalid}`);
  return policy;
}
