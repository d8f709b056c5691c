// How a command ends: its exit statuses and the two errors the CLI turns into them.

/**
 * Exit statuses: 0 success, 1 failure, 2 usage, 75 busy (sysexits' EX_TEMPFAIL: another run
 * holds what this one needs, e.g. the trail's archive lock; try again later).
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, busy: 75 } as const;

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
