import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/**
 * The production tree as `npm ci --omit=dev` installs it, read from package-lock.json: what a
 * scanner would report, checked here where the registry's advisory service cannot be reached
 * (docs/security/dependencies.md says how to run `npm audit` where it can).
 */
interface LockedPackage {
  readonly version?: string;
  readonly dev?: boolean;
  readonly engines?: Readonly<Record<string, string>>;
}
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Readonly<Record<string, LockedPackage>>;
};
const production = Object.entries(lock.packages).filter(([path, p]) => path !== '' && p.dev !== true);
const named = (name: string) =>
  production.filter(([path]) => path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`));
const parts = (version: string) => version.split(/[.+-]/).slice(0, 3).map(Number);
const atLeast = (version: string, floor: string) => {
  const [a, b] = [parts(version), parts(floor)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

/** Published advisories that reached this tree once, with the first version outside them. */
const FLOORS = [
  // GHSA-jmr7-xgp7-cmfj, GHSA-m7jm-9gc2-mpf2, GHSA-mpg4-rc92-vx8v: under the ACM PCA client's own STS client.
  { name: 'fast-xml-parser', floor: '4.5.4' },
];

describe('the production dependency tree (package-lock.json)', () => {
  it.each(FLOORS)('holds no $name below $floor', ({ name, floor }) => {
    const found = named(name);
    for (const [path, p] of found)
      expect(atLeast(p.version ?? '0', floor), `${path}@${p.version}`).toBe(true);
  });

  it('holds better-sqlite3 13 or later: one Node-API binary for every Node line, nothing compiled', () => {
    const [[, sqlite] = ['', {}]] = named('better-sqlite3');
    expect(atLeast(sqlite.version ?? '0', '13.0.0')).toBe(true);
  });

  it('declares the Node it supports, no lower than what its production dependencies declare', () => {
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(own.engines.node).toBe('>=22.15');
    const ours = own.engines.node.slice('>='.length);
    // Every `>=X` floor a production package declares is at most ours.
    for (const [path, p] of production) {
      const floor = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(p.engines?.node ?? '')?.[1];
      if (floor !== undefined) expect(atLeast(ours, floor), `${path} needs node ${floor}`).toBe(true);
    }
  });

  /**
   * Whether a newer major has been published needs the registry: `npm outdated --omit=dev`
   * (docs/security/dependencies.md). What can be checked here is that package.json does not
   * declare a line behind the one locked and installed: each production dependency is one
   * caret or tilde range (so the range's floor is the line used: no `>=`, `*` or `||` that
   * would let an install without the lockfile take an older major), on the major the lockfile
   * holds, and node_modules holds what the lockfile says.
   */
  it('declares each production dependency on the major it has installed', () => {
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Readonly<Record<string, string>>;
    };
    // The line a version is on: its major, or 0.MINOR below 1 (where a caret stays).
    const lineOf = (version: string) => {
      const [major = 0, minor = 0] = parts(version);
      return major === 0 ? `0.${minor}` : String(major);
    };
    for (const [name, range] of Object.entries(own.dependencies)) {
      const floor = /^[\^~](\d+\.\d+\.\d+)$/.exec(range)?.[1];
      expect(floor, `${name}: ${range} is not ^X.Y.Z or ~X.Y.Z`).toBeDefined();
      const locked = lock.packages[`node_modules/${name}`]?.version ?? '(not locked)';
      expect(lineOf(floor ?? '0.0.0'), `${name}: package.json ${range}, package-lock.json ${locked}`).toBe(
        lineOf(locked),
      );
      const installed = (
        JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
      expect(installed, `${name}: node_modules holds ${installed}, package-lock.json ${locked}: npm ci`).toBe(
        locked,
      );
    }
  });
});
