import { describe, expect, it } from 'vitest';
import { CliRun, finishTree, rootCommand } from '../../../src/app/cli/program.js';
import type { Io } from '../../../src/app/commands/io.js';

/**
 * A command's help words live apart from its tree, by path (src/app/cli/*_WORDS): the tree is
 * not built unless every command has its words and every path named is a command, so no
 * command goes without its help and no words are left for a command renamed.
 */
const io: Io = { out: () => {}, err: () => {}, env: {}, stderrIsTty: false };

function tree() {
  const root = rootCommand(new CliRun(io));
  root.command('things').command('list');
  return root;
}

describe("the commands' words", () => {
  it('are each said in the help of their command', () => {
    const root = tree();
    finishTree(root, {
      things: { summary: 'the things' },
      'things list': {
        summary: 'list the things',
        description: ['One.', 'Two.'],
        examples: ['case-read things list'],
      },
    });
    const list = root.commands[0]?.commands[0];
    expect(list?.summary()).toBe('list the things');
    expect(list?.description()).toBe('One.\n\nTwo.');
    expect(list?.helpInformation()).toMatch(/^Usage: case-read things list \[options\]/);
  });

  it('a command without words stops the tree being built, naming it', () => {
    expect(() => finishTree(tree(), { things: { summary: 'the things' } })).toThrow(
      "the command 'case-read things list' has no words for its help",
    );
  });

  it('words for no command stop it too, naming them', () => {
    expect(() =>
      finishTree(tree(), {
        things: { summary: 'the things' },
        'things list': { summary: 'list the things' },
        'things lsit': { summary: 'a typo' },
      }),
    ).toThrow('words for no command: things lsit');
  });
});
