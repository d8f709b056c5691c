// How a command ends: its exit statuses and the two errors the CLI turns into them.

/**
 * Exit statuses: 0 success, 1 failure, 2 usage, 75 busy (sysexits' EX_TEMPFAIL: another run
 * holds what this one needs, e.g. the trail's archive lock; try again later), and 141 when
 * stdout's reader went away before the command had printed all it had (`| head`): the status
 * a shell shows for git or cat ended by SIGPIPE (128 + 13), so `set -o pipefail` sees the same.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, busy: 75, outputClosed: 141 } as const;

/**
 * stdout's reader went away (`| head -1`, `| grep -q`, a closed pager): what the command had
 * left to print has nobody to read it, so it stops where it is, as any failure stops it (its
 * stores closed, nothing half-written), and the CLI ends quietly with {@link EXIT.outputClosed}.
 * A command that catches errors lets this one through.
 */
export class OutputClosedError extends Error {
  constructor() {
    super('stdout was closed by its reader');
  }
}

/** Bad arguments: the CLI prints the message and where the command's help is, and exits 2. */
export class UsageError extends Error {}

/** A command that ran and failed for a reason the operator can act on: exit 1, or the status given. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly status: number = EXIT.failure,
  ) {
    super(message);
  }
}
