import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cruise, type IReporterOutput } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The CLI's tree (src/app/cli/) describes commands and never imports the composition root
 * (issue 61): `.dependency-cruiser.cjs` holds it with the rule
 * `the-command-tree-does-not-compose`, which `npm run deps` checks on the whole of src/. Here:
 * the rule holds on src/app/cli, and the same rule refuses a tree that breaks it.
 */
const RULE = 'the-command-tree-does-not-compose';
const require = createRequire(import.meta.url);
const config = require('../../../.dependency-cruiser.cjs') as {
  forbidden: { name: string }[];
  options: { tsConfig: { fileName: string } };
};

async function violationsOf(paths: string[], baseDir?: string): Promise<string[]> {
  expect(config.forbidden.map((rule) => rule.name)).toContain(RULE);
  // A scratch tree is plain JavaScript, cruised from its own directory, without the tsconfig.
  const { tsConfig, ...plain } = config.options;
  const result: IReporterOutput = await cruise(paths, {
    ...(baseDir === undefined ? { ...plain, tsConfig } : { ...plain, baseDir }),
    validate: true,
    // biome-ignore lint/suspicious/noExplicitAny: dependency-cruiser's rule set type is its own JSON schema
    ruleSet: { forbidden: config.forbidden as any },
  });
  if (typeof result.output === 'string') throw new Error('expected a cruise result');
  return result.output.summary.violations
    .filter((v) => v.rule.name === RULE)
    .map((v) => `${v.from} -> ${v.to}`);
}

const scratch = mkdtempSync(join(tmpdir(), 'cli-tree-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the CLI tree does not compose', () => {
  it('no module of src/app/cli imports src/app/composition', async () => {
    expect(await violationsOf(['src/app/cli'])).toEqual([]);
  }, 60_000);

  it('the rule refuses a tree module that imports the composition root', async () => {
    mkdirSync(join(scratch, 'src/app/cli'), { recursive: true });
    mkdirSync(join(scratch, 'src/app/composition'), { recursive: true });
    writeFileSync(join(scratch, 'src/app/composition/root.js'), 'export const root = 1;\n');
    writeFileSync(
      join(scratch, 'src/app/cli/tree.js'),
      "import { root } from '../composition/root.js';\nexport const tree = root;\n",
    );
    expect(await violationsOf(['src/app/cli'], scratch)).toEqual([
      'src/app/cli/tree.js -> src/app/composition/root.js',
    ]);
  }, 60_000);
});
