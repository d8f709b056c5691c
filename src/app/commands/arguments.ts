// A command's arguments: parsed strictly, counted, and the operator's input read by the
// domain's rules, each failure a usage error (exit 2) with the rule's own message.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ClientName } from '../../domain/access/client-name.js';
import { UsageError } from './exit.js';

export type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Exactly `n` positionals, named for the message. */
export function positionals(given: string[], names: readonly string[]): string[] {
  if (given.length < names.length) throw new UsageError(`missing ${names.slice(given.length).join(' ')}`);
  if (given.length > names.length)
    throw new UsageError(`unexpected argument: ${given.slice(names.length).join(' ')}`);
  return given;
}

/** Runs a parse of the operator's input; its error becomes a usage error with the same message. */
export function usage<T>(parseInput: () => T): T {
  try {
    return parseInput();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A client name given on the command line; a bad one is a usage error naming the rule. */
export const clientIdOf = (raw: string): ClientName => usage(() => ClientName.parse(raw));
