// Child processes: started, awaited until they print their port, stopped. Every child
// started here is tracked until it exits, so that whatever ends the run (a scenario
// throwing, a signal, an uncaught exception) stops every one of them: stopAll() on the
// orderly paths, a SIGTERM to each from the process's 'exit' event otherwise.
import { spawn } from 'node:child_process';
import { ROOT } from './paths.mjs';

const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

const exited = (child) => child.exitCode !== null || child.signalCode !== null;

/**
 * `command ...argv` in the checkout, with `env`; resolves to { child, port } once
 * readyMatch(output so far) returns the port, rejects if it exits first or within 20 s.
 */
export function startProcess(command, argv, env, readyMatch) {
  const child = spawn(command, argv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${output}`)), 20_000);
    const onData = (chunk) => {
      output += chunk.toString();
      const port = readyMatch(output);
      if (port) {
        clearTimeout(timer);
        // Stop collecting: from here on the output is only drained, never kept, so the
        // load generator in this process does no work for the server's logs.
        child.stdout.removeListener('data', onData);
        child.stderr.removeListener('data', onData);
        child.stdout.resume();
        child.stderr.resume();
        resolve({ child, port });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code}:\n${output}`)));
    child.once('error', (error) => {
      // Never spawned (no such command, say): there is no process to stop.
      if (child.pid === undefined) running.delete(child);
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** SIGTERM, then the child's exit. */
export async function stop(child) {
  if (exited(child)) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

/**
 * Stops every child still running (none, after a run that went well), each with SIGTERM and,
 * if it has not exited within `graceMs`, SIGKILL.
 */
export async function stopAll({ graceMs = 10_000 } = {}) {
  await Promise.all(
    [...running].map(async (child) => {
      if (exited(child)) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await stop(child);
      clearTimeout(timer);
    }),
  );
}
