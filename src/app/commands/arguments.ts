// The operator's input read by the domain's rules: each failure a usage error (exit 2) with
// the rule's own message. Options and arguments themselves are parsed by the command tree
// (src/app/cli/).
import { ClientName } from '../../domain/access/client-name.js';
import { UsageError } from './exit.js';

/**
 * Runs a parse of the operator's input; its error becomes a usage error with the same message,
 * after the option it is about when one is named (`--rate-limit: …`). A usage error already
 * made (it says what it is about) goes through as it is.
 */
export function usage<T>(parseInput: () => T, option?: string): T {
  try {
    return parseInput();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const message = (error as Error).message;
    throw new UsageError(option === undefined ? message : `${option}: ${message}`);
  }
}

/** A client name given on the command line; a bad one is a usage error naming the rule. */
export const clientIdOf = (raw: string): ClientName => usage(() => ClientName.parse(raw));
