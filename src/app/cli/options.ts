// The options more than one command takes, each defined once with its help text: the stores
// (--access-store, --audit-store, --store, --case-store), the log's keys (--vkey, --public-key,
// --origin), --archive, --policy and --json. A command attaches the ones it takes; an option
// whose purpose differs by command (--archive, --policy, --public-key) is given that purpose
// in a few words, and the rest of its help is said here.
import { type Command, Option, type OptionValues } from '@commander-js/extra-typings';

/**
 * What the store options say of the stores: the forms each role takes and the default of
 * each store variable. The entry point (src/app/cli.ts) reads them from the store registry,
 * so the tree names no store kind and loads no composition.
 */
export interface StoreWords {
  /** The forms of an access store that can be administered, e.g. `sqlite:FILE or postgres://...`. */
  readonly accessForms: string;
  /** The forms of an audit store. */
  readonly auditForms: string;
  /** The forms of a case store that `cases import` and `cases generate` can write to. */
  readonly caseWriterForms: string;
  /** A store variable's default: `fallbackOf('AUDIT_STORE')` is `sqlite:./data/audit.db`. */
  fallbackOf(variable: 'ACCESS_STORE' | 'AUDIT_STORE' | 'CASE_STORE'): string;
}

/** A repeated option's values, in the order given: `--public-key A --public-key B`. */
export const collect = (value: string, previous: string[] | undefined): string[] => [
  ...(previous ?? []),
  value,
];

/** The options that name a store, with their forms and defaults from `words`. */
export function storeOptions(words: StoreWords) {
  /** `(else VARIABLE, else its default)`: where a store option's value comes from when not given. */
  const fallback = (variable: Parameters<StoreWords['fallbackOf']>[0]) =>
    `(else ${variable}, else ${words.fallbackOf(variable)})`;
  return {
    /** `--access-store STORE`: the store of clients, keys, certificates and grants. */
    accessStore: () =>
      new Option(
        '--access-store <STORE>',
        `the access store: ${words.accessForms} ${fallback('ACCESS_STORE')}`,
      ),
    /** `--audit-store STORE`: the audit trail. */
    auditStore: () =>
      new Option('--audit-store <STORE>', `the audit trail: ${words.auditForms} ${fallback('AUDIT_STORE')}`),
    /** `--store STORE` of the cases commands: the case store, `what` it is to them. */
    caseStore: (what: string) =>
      new Option('--store <STORE>', `${what}: ${words.caseWriterForms} ${fallback('CASE_STORE')}`),
    /** `--case-store STORE` of `stores migrate`. */
    migratedCaseStore: () => new Option('--case-store <STORE>', `the case store ${fallback('CASE_STORE')}`),
    /** `--case-store STORE` of `subject-access`: none unless given. */
    includedCaseStore: () =>
      new Option('--case-store <STORE>', 'the case store whose copy of the case is included (default: none)'),
  };
}

/** What the store options of a tree are: {@link storeOptions} of its words. */
export type StoreOptions = ReturnType<typeof storeOptions>;

/** `--json`: the result as one JSON object on stdout. */
export const jsonOption = () => new Option('--json', 'print the result as one JSON object');

/** `--vkey VKEY`: the key a checkpoint note is checked with, before any `--public-key`. */
export const vkeyOption = () =>
  new Option('--vkey <VKEY>', "the log's verifier key (the line `audit vkey` prints), or a file holding it");

/** The help of `--public-key` where it names one of the log's keys, the commonest purpose. */
const LOG_PUBLIC_KEY = "a public key (PEM) of the log's";

/** `--public-key PEM`, any number of times: keys the log's checkpoints are signed with, `what` they are for. */
export const publicKeysOption = (what: string) =>
  new Option('--public-key <PEM>', `${what}; repeat it for each key`).argParser(collect);

/** `--public-key PEM`, once: the one key of `audit vkey`. */
export const publicKeyOption = () => new Option('--public-key <PEM>', 'the public key (PEM) of the log');

/** `--origin O`: the log's name, that `--public-key` keys sign checkpoint notes under. */
export const originOption = () =>
  new Option('--origin <O>', "the log's origin, for --public-key (else AUDIT_ORIGIN, else its default)");

/**
 * `--vkey`, `--public-key` (of the log's) and `--origin`, in that order: the keys a command
 * that reads an archive checks its checkpoint with, added to `command` after its own options.
 */
export const withLogKeys = <A extends unknown[], O extends OptionValues>(command: Command<A, O>) =>
  command.addOption(vkeyOption()).addOption(publicKeysOption(LOG_PUBLIC_KEY)).addOption(originOption());

/** `--archive DIR`: an archive of `audit archive`, and what the command does with it. */
export const archiveOption = (what: string) => new Option('--archive <DIR>', what);

/** `--policy FILE`: a C2SP tlog-policy of witnesses (decisions §19), and what it asks of the command. */
export const policyOption = (what: string) =>
  new Option('--policy <FILE>', `a witness policy (C2SP tlog-policy): ${what}`);
