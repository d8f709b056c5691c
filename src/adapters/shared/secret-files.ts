import { closeSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';

/**
 * Private keys and secret files (`TLS_KEY`, `UPSTREAM_TLS_KEY`, `CLIENT_CA_KEY`,
 * `AUDIT_SIGNING_KEY`, `RATE_LIMIT_TLS_KEY`, a PostgreSQL URL's `sslkey`, each `*_FILE`
 * secret): the one home of the rule that one readable by others (mode o+r) is refused, at
 * start and at every reload. Group-readable is allowed: a Kubernetes secret volume with
 * `defaultMode: 0440` and an `fsGroup` gives the service its files that way. The mode is
 * the file's, symlinks followed: a mounted secret is a symlink into `..data/`, itself a
 * symlink, and what counts is the file the service reads.
 *
 * A refusal names the variable, the file and its mode, and the fix; never the contents.
 * Each caller says what it throws (its own error type: a ConfigError, a StoreError, a
 * CommandError), so a refusal reads like the caller's other problems with the file.
 *
 * `node:fs` only, which Node, Bun and Deno all offer alike. On Windows there are no POSIX
 * modes (`stat` reports every file 0666 or 0444, whoever may read it), so no file there is
 * refused for its mode; the service runs on Linux.
 */

/** What a caller throws for a refusal: its own error, with the message given. */
export type Refusal = (message: string) => Error;

/** Whether modes say who may read a file here: not on Windows. */
const HAS_POSIX_MODES = process.platform !== 'win32';

/** A mode as `ls` and `chmod` write it: four octal digits, e.g. `0644`. */
const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * Why a key or secret file of this mode must not be used, or undefined when it may: the
 * rule itself, on the mode alone (the permission bits of `stat`, symlinks followed).
 */
export function secretFileModeProblem(variable: string, path: string, mode: number): string | undefined {
  if (!HAS_POSIX_MODES || (mode & 0o004) === 0) return undefined;
  return `${variable}: ${path} is readable by others (mode ${octal(mode)}); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`;
}

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? 'error';

/**
 * Reads the key or secret file `path` that `variable` names (UTF-8), refused with
 * `refuse(message)` when it cannot be read (`VARIABLE: PATH cannot be read (ENOENT)`) or is
 * readable by others. The mode is taken from the file opened, so the file judged is the
 * file read, even when a mounted secret's link is swapped between the two.
 */
export function readSecretFile(variable: string, path: string, refuse: Refusal): string {
  const unreadable = (error: unknown) => refuse(`${variable}: ${path} cannot be read (${codeOf(error)})`);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw unreadable(error);
  }
  try {
    let mode: number;
    try {
      mode = fstatSync(fd).mode;
    } catch (error) {
      throw unreadable(error);
    }
    const problem = secretFileModeProblem(variable, path, mode);
    if (problem !== undefined) throw refuse(problem);
    try {
      return readFileSync(fd, 'utf8');
    } catch (error) {
      throw unreadable(error);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a file that is not secret (a certificate, a CA bundle) named by `variable`, refused
 * with `refuse(message)` when it cannot be read, in the words {@link readSecretFile} uses.
 */
export function readNamedFile(variable: string, path: string, refuse: Refusal): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw refuse(`${variable}: ${path} cannot be read (${codeOf(error)})`);
  }
}

/**
 * The mode check of {@link readSecretFile} alone, for a caller that reads the file itself
 * (its own size limit, bytes rather than text): refused with `refuse(message)` when the
 * file is readable by others. A file that cannot be stat'ed passes: the caller's own read
 * then says why it cannot be read.
 */
export function checkSecretFile(variable: string, path: string, refuse: Refusal): void {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return;
  }
  const problem = secretFileModeProblem(variable, path, mode);
  if (problem !== undefined) throw refuse(problem);
}
