import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { ROOT } from './cli.js';
import { NODE } from './runtimes.js';

/**
 * Another process holding a trail's archive lock, as a run of `audit archive` on another
 * machine would: a Node process (whatever runtime runs the test) that opens the audit log
 * `opening` gives (a module expression over the built `dist/`, `DIST` standing for its URL) and
 * takes the lock as `who`, then waits to be killed. Resolves once it holds the lock.
 */
export async function archiveLockHolder(opening: string, who: string): Promise<ChildProcess> {
  const script = `const DIST = ${JSON.stringify(`${join(ROOT, 'dist')}/`)};
    const log = await (${opening});
    const taken = await log.lockArchive(${JSON.stringify(who)});
    process.stdout.write('held' in taken ? 'held\\n' : 'busy\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(NODE.command, [...NODE.args, '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  if (line.toString() !== 'held\n') {
    child.kill('SIGKILL');
    throw new Error(`the holder did not take the lock: ${line.toString().trim()}`);
  }
  return child;
}
