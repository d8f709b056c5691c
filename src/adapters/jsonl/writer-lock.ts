import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

/** Whether a process with this pid exists (EPERM: it does, but is another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A lock file holding its writer's pid, created exclusively. A lock whose process is gone
 * (the writer was killed) is taken over; a live one, this process's own included, refuses.
 * Two processes taking over the same stale lock at the same instant could both succeed:
 * that needs two writers started together just after a crash, and is not guarded against.
 */
export class WriterLock {
  private constructor(private readonly path: string) {}

  static take(path: string, error: (message: string) => Error, what: string): WriterLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        try {
          writeSync(fd, `${process.pid}\n`);
        } finally {
          closeSync(fd);
        }
        return new WriterLock(path);
      } catch (cause) {
        const code = (cause as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') throw error(`cannot take the writer lock ${path} for ${what} (${code})`);
      }
      let holder = Number.NaN;
      try {
        holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      } catch {
        // Removed in between: try again.
      }
      if (Number.isSafeInteger(holder) && holder > 0 && alive(holder)) {
        throw error(
          `${what} is being written by process ${holder} (lock ${path}); a JSONL audit file takes one writer: use sqlite:PATH for several processes on one machine, or postgres://… for several machines`,
        );
      }
      rmSync(path, { force: true });
    }
    throw error(`cannot take the writer lock ${path} for ${what}: it keeps reappearing`);
  }

  release(): void {
    rmSync(this.path, { force: true });
  }
}
