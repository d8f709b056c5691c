/**
 * A configuration that cannot be used: every problem, each naming its variable. The CLI prints
 * them and exits 1; a reload that meets one keeps what is in use. Its own file, so that the
 * application (the reload of TLS files, say) names it without reaching into the composition
 * root, which reads the configuration and re-exports it.
 */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * What `make` makes of the configuration; any error it throws becomes a ConfigError naming
 * `variable` (and whatever more `variable` says, a file say), then the error's message.
 */
export function configured<T>(variable: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw new ConfigError([`${variable}: ${(error as Error).message}`]);
  }
}
