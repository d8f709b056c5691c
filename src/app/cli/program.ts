// What every command of the CLI shares: the run it belongs to (its streams, the status its
// command returned, which command that was), and how help and errors are worded. The command
// tree is commander's (docs/decisions/0025-the-cli-on-commander.md); each group of commands is
// defined in a file of its own beside this one, the options several take in options.ts, and a
// command's work is loaded only when it runs, from src/app/commands/ (work.ts).
import { Command, type CommandUnknownOpts, Help, type Option } from '@commander-js/extra-typings';
import { PERMISSIONS } from '../../domain/access/permissions.js';
import { EXIT } from '../commands/exit.js';
import type { Io } from '../commands/io.js';

/** One run of the CLI: what its command reads and writes, and what it ended with. */
export class CliRun {
  /** The exit status the command returned. */
  status: number = EXIT.ok;
  /** The command that ran, e.g. `clients add`: a usage error points to its help. */
  path = '';

  constructor(readonly io: Io) {}

  /** A command's action ends with its status. */
  readonly done = (status: number): void => {
    this.status = status;
  };

  /**
   * The actions of the commands whose work is the module `load` loads (src/app/commands/, see
   * work.ts): `access((m, cn, options) => m.clientsShow(cn, options, run.io))` loads it when the
   * command runs, not before, and calls what it picks with the command's arguments and options,
   * their types checked against the command's own; the status returned is the run's.
   */
  readonly loads =
    <M>(load: () => Promise<M>) =>
    <A extends unknown[]>(pick: (module: M, ...given: A) => Promise<number>) =>
    async (...given: A): Promise<void> => {
      this.done(await pick(await load(), ...given));
    };
}

/**
 * What a command says of itself in its help: a one-line summary (the lists), a description
 * (its paragraphs, each a string), a usage line where commander's would not say its forms,
 * and the examples its help ends with. A group says only its summary.
 */
export interface Words {
  readonly summary: string;
  readonly description?: string | readonly string[];
  readonly usage?: string;
  readonly examples?: readonly string[];
}

/** The words of each command, by its path (`clients add`): a group file's prose, apart from its tree. */
export type WordsByPath = Readonly<Record<string, Words>>;

/** `clients add`: the words that name a command below `case-read`. */
export function pathOf(command: CommandUnknownOpts): string {
  if (command.parent === null) return '';
  const above = pathOf(command.parent);
  return above === '' ? command.name() : `${above} ${command.name()}`;
}

/** The line that points from an error to the command's help. */
export const helpPointer = (path: string): string =>
  path === '' ? "Run 'case-read --help' for the commands." : `Run 'case-read ${path} --help' for its usage.`;

/** The example a command's help ends with: one or more command lines. */
export const example = (...lines: string[]): string =>
  `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((line) => `  $ ${line}`).join('\n')}`;

/** The permissions a client can be given, for the help of the commands that take them. */
export const PERMISSION_LIST = PERMISSIONS.join(', ');

/**
 * What every command inherits from the root (commander copies these settings to a command when
 * it is made): output through the run's Io, errors instead of process.exit, an error's line
 * starting `case-read:`, no help subcommand (`case-read help COMMAND` is read by main).
 */
export function rootCommand(run: CliRun): Command {
  const strip = (text: string) => text.replace(/\n$/, '');
  return new Command('case-read')
    .description(
      'A read-only HTTPS service returning what is held about a person under supervision, by case reference number (crn); and the commands that run it.',
    )
    .configureOutput({
      writeOut: (text) => run.io.out(strip(text)),
      writeErr: (text) => run.io.err(strip(text)),
      outputError: (text, write) => write(text.replace(/^error: /, 'case-read: ')),
    })
    .exitOverride()
    .helpOption('-h, --help', 'show this help')
    .helpCommand(false)
    .allowExcessArguments(false)
    .showSuggestionAfterError(true)
    .hook('preAction', (_root, command) => {
      run.path = pathOf(command);
    });
}

/** Every command of the tree, depth first. */
function* everyCommand(command: CommandUnknownOpts): Generator<CommandUnknownOpts> {
  yield command;
  for (const sub of command.commands) yield* everyCommand(sub);
}

/** The commands that run with an action of their own and hold commands too (see {@link runsAndHolds}). */
const RUN_AND_HOLD = new WeakSet<CommandUnknownOpts>();

/**
 * Marks `command`, which runs with an action of its own, as holding commands too
 * (`subject-access`, and `subject-access verify` below it): it is listed with the commands that
 * run, and its options (and those of the commands above it) are read only before the next
 * command's name (commander's positional options), so that `subject-access verify FILE --vkey V`
 * gives `--vkey` to `verify`, not to `subject-access`, which takes one of its own, and
 * `subject-access verify FILE --crn X` is refused as `verify`'s unknown option.
 */
export function runsAndHolds(command: CommandUnknownOpts): void {
  RUN_AND_HOLD.add(command);
  for (let above: CommandUnknownOpts | null = command; above !== null; above = above.parent) {
    above.enablePositionalOptions();
  }
}

/**
 * The commands that run, in the order they were defined: the tree's leaves (not its groups),
 * and the commands that run and hold commands too.
 */
export const leavesOf = (root: CommandUnknownOpts): CommandUnknownOpts[] =>
  [...everyCommand(root)].filter(
    (command) => command !== root && (command.commands.length === 0 || RUN_AND_HOLD.has(command)),
  );

/**
 * Each command's words, by its path: every command has its own, and every path named is a
 * command (either missing stops the tree being built, so no command goes without its help).
 */
function describe(root: Command, words: WordsByPath): void {
  const unused = new Set(Object.keys(words));
  for (const command of everyCommand(root)) {
    if (command === root) continue;
    const path = pathOf(command);
    const said = words[path];
    if (said === undefined) throw new Error(`the command 'case-read ${path}' has no words for its help`);
    unused.delete(path);
    command.summary(said.summary);
    if (said.description !== undefined) {
      command.description(
        typeof said.description === 'string' ? said.description : said.description.join('\n\n'),
      );
    }
    if (said.usage !== undefined) command.usage(said.usage);
    if (said.examples !== undefined) command.addHelpText('after', example(...said.examples));
  }
  if (unused.size > 0) throw new Error(`words for no command: ${[...unused].join(', ')}`);
}

/**
 * Once the tree is built: each command says its words, its errors point to its own help, and
 * the root's help lists every command that runs (not the groups), one line each.
 */
export function finishTree(root: Command, words: WordsByPath): void {
  describe(root, words);
  for (const command of everyCommand(root)) {
    command.showHelpAfterError(helpPointer(pathOf(command))).helpCommand(false);
  }
  checkRequiredOptionsLast(root);
  const leaves = leavesOf(root);
  const term = new Help();
  root
    .configureHelp({
      visibleCommands: () => leaves,
      // `clients add [options] <CN>`: the group's words, then the command's own term (not
      // its usage line, which may spell out its forms: the command's help shows those).
      subcommandTerm: (command) => {
        const group = command.parent === null ? '' : pathOf(command.parent);
        return group === '' ? term.subcommandTerm(command) : `${group} ${term.subcommandTerm(command)}`;
      },
      subcommandDescription: (command) => command.summary() || command.description(),
    })
    .addHelpText(
      'after',
      [
        '',
        "Run 'case-read help COMMAND' (or 'case-read COMMAND --help') for a command's usage, options and an example.",
        'Exit status: 0 success, 1 failure, 2 usage (this help names why), 75 busy (try again later).',
        'Configuration: docs/operations/configuration.md; the witness: docs/operations/witness.md.',
      ].join('\n'),
    );
}

/**
 * A required option (`.requiredOption`, which also types it as given) is checked once the
 * command's options and arguments have been read, not before as commander does: so a
 * mistyped required option (`--permission` for `--permissions`) is reported as the unknown
 * option it is, with the option meant, rather than as the required one missing. The check
 * itself, and its words, are commander's; its help marks the option `(required)`.
 */
function checkRequiredOptionsLast(root: Command): void {
  const required = new Set<Option>();
  for (const command of everyCommand(root)) {
    for (const option of command.options) {
      if (!option.mandatory) continue;
      option.mandatory = false;
      option.description = `${option.description} (required)`;
      required.add(option);
    }
  }
  root.hook('preAction', (_root, command) => {
    for (const option of command.options) {
      if (required.has(option) && command.getOptionValue(option.attributeName()) === undefined) {
        command.error(`error: required option '${option.flags}' not specified`, {
          code: 'commander.missingMandatoryOptionValue',
        });
      }
    }
  });
}
