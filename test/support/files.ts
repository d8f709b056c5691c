import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Runs `check` with one bit of byte `at` of the file at `path` flipped, as a change made
 * behind the service's back would, and puts the file back as it was whatever happens.
 */
export function withByteFlipped<T>(path: string, at: number, check: () => T): T {
  const original = readFileSync(path);
  const changed = Buffer.from(original);
  changed[at] = (changed[at] as number) ^ 1;
  writeFileSync(path, changed);
  try {
    return check();
  } finally {
    writeFileSync(path, original);
  }
}
