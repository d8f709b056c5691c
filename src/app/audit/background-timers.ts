// Timers for the audit trail's background work (checkpoints, witnesses): they never keep the
// process alive. Deno's timers are numbers with no unref; Node's and Bun's are unreferenced.

/** Runs `run` once after `ms`, unreferenced. */
export function backgroundTimeout(run: () => void, ms: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(run, ms);
  timer.unref?.();
  return timer;
}

/** Runs `run` every `ms`, unreferenced. */
export function backgroundInterval(run: () => void, ms: number): ReturnType<typeof setInterval> {
  const timer = setInterval(run, ms);
  timer.unref?.();
  return timer;
}
