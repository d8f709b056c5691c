import { statSync } from 'node:fs';
import {
  type Refusal,
  type RegularFileOptions,
  readRegularFile,
  readRegularFileSync,
} from './named-files.js';

/**
 * Private keys and secret files (`TLS_KEY`, `UPSTREAM_TLS_KEY`, `CLIENT_CA_KEY`,
 * `AUDIT_SIGNING_KEY`, `RATE_LIMIT_TLS_KEY`, a PostgreSQL URL's `sslkey`, each `*_FILE`
 * secret): the one home of the rule that one readable or writable by others (mode o+r or
 * o+w) is refused, at start and at every reload (decisions §17, §20): readable, anyone on
 * the machine has the key; writable, anyone can put their own key in its place. Group access
 * is allowed: a Kubernetes secret volume with `defaultMode: 0440` and an `fsGroup` gives the
 * service its files that way. The mode is the file's, symlinks followed: a mounted secret is
 * a symlink into `..data/`, itself a symlink, and what counts is the file the service reads.
 *
 * Every file is read by named-files.ts (opened without blocking, a regular file, of a
 * bounded size); here, the secret's rule is added to it. A refusal names the variable, the
 * file and its mode, and the fix; never the contents. Each caller says what it throws (its
 * own error type: a ConfigError, a StoreError, a CommandError), so a refusal reads like the
 * caller's other problems with the file.
 *
 * On Windows there are no POSIX modes (`stat` reports every file 0666 or 0444, whoever may
 * read it), so no file there is refused for its mode; the service runs on Linux.
 */

export type { Refusal } from './named-files.js';

/** Whether modes say who may read a file here: not on Windows. */
const HAS_POSIX_MODES = process.platform !== 'win32';

/** A mode as `ls` and `chmod` write it: four octal digits, e.g. `0644`. */
const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * Why a key or secret file of this mode must not be used, or undefined when it may: the
 * rule itself, on the mode alone (the permission bits of `stat`, symlinks followed).
 */
export function secretFileModeProblem(variable: string, path: string, mode: number): string | undefined {
  if (!HAS_POSIX_MODES) return undefined;
  const readable = (mode & 0o004) !== 0;
  const writable = (mode & 0o002) !== 0;
  if (!readable && !writable) return undefined;
  const what = readable && writable ? 'readable and writable' : readable ? 'readable' : 'writable';
  return `${variable}: ${path} is ${what} by others (mode ${octal(mode)}); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`;
}

/** What a read of a named file may be told beyond the defaults: its own size bound. */
export type NamedFileOptions = Pick<RegularFileOptions, 'maxBytes'>;

/** The options of a secret's read: the caller's, and the rule on its mode. */
const secretOptions = (variable: string, path: string, options: NamedFileOptions): RegularFileOptions => ({
  ...options,
  modeProblem: (mode) => secretFileModeProblem(variable, path, mode),
});

/**
 * Reads the key or secret file `path` that `variable` names (UTF-8) at start-up, refused
 * with `refuse(message)` when it cannot be read (`VARIABLE: PATH cannot be read (ENOENT)`),
 * is not a regular file (a FIFO is refused, never waited on), is over the size bound, or is
 * readable or writable by others. The mode is taken from the file opened, so the file
 * judged is the file read, even when a mounted secret's link is swapped between the two.
 */
export function readSecretFile(
  variable: string,
  path: string,
  refuse: Refusal,
  options: NamedFileOptions = {},
): string {
  return readRegularFileSync(
    `${variable}:`,
    path,
    refuse,
    secretOptions(variable, path, options),
  ).bytes.toString('utf8');
}

/** {@link readSecretFile} without blocking the event loop: for a reload, or a read while serving. */
export async function readSecretFileAsync(
  variable: string,
  path: string,
  refuse: Refusal,
  options: NamedFileOptions = {},
): Promise<string> {
  const file = await readRegularFile(`${variable}:`, path, refuse, secretOptions(variable, path, options));
  return file.bytes.toString('utf8');
}

/**
 * Reads a file that is not secret (a certificate, a CA bundle) named by `variable` at
 * start-up, refused with `refuse(message)` as {@link readSecretFile} refuses one, its mode
 * aside.
 */
export function readNamedFile(
  variable: string,
  path: string,
  refuse: Refusal,
  options: NamedFileOptions = {},
): string {
  return readRegularFileSync(`${variable}:`, path, refuse, options).bytes.toString('utf8');
}

/** {@link readNamedFile} without blocking the event loop: for a reload, or a read while serving. */
export async function readNamedFileAsync(
  variable: string,
  path: string,
  refuse: Refusal,
  options: NamedFileOptions = {},
): Promise<string> {
  return (await readRegularFile(`${variable}:`, path, refuse, options)).bytes.toString('utf8');
}

/**
 * The mode check of {@link readSecretFile} alone, on a path, for a caller that reads the
 * file itself: refused with `refuse(message)` when the file is readable or writable by
 * others. A file that cannot be stat'ed passes: the caller's own read then says why it
 * cannot be read. Prefer {@link readSecretFile}, which judges the file it reads.
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
