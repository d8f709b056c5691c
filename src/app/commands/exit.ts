// How a command ends: its exit statuses and the two errors the CLI turns into them.

/**
 * Exit statuses: 0 success, 1 failure, 2 usage, 75 busy (sysexits' EX_TEMPFAIL: another run
 * holds what this one needs, e.g. the trail's archive lock; try again later).
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, busy: 75 } as const;

/** Bad arguments: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {
  /**
   * The error of a command `group` (e.g. `keys`) run with no subcommand, or with one it does
   * not have; `known` lists its subcommands for the message, e.g. `issue, list or revoke`.
   */
  static unknownSubcommand(group: string, known: string, sub: string | undefined): UsageError {
    return new UsageError(
      sub === undefined ? `${group} needs a subcommand: ${known}` : `unknown ${group} subcommand: ${sub}`,
    );
  }
}

/** A command that ran and failed for a reason the operator can act on: exit 1, or the status given. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly status: number = EXIT.failure,
  ) {
    super(message);
  }
}
