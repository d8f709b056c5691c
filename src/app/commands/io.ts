// What a command reads and writes: its streams and environment, and how it reports a result.

export interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: Record<string, string | undefined>;
  readonly stderrIsTty: boolean;
}

/** What a command that can report as JSON is given: `--json`. */
export interface JsonGiven {
  readonly json?: boolean | undefined;
}

/** Prints `data` as JSON with --json, else the human lines. */
export function report(io: Io, json: boolean | undefined, data: unknown, human: string | string[]): void {
  if (json) io.out(JSON.stringify(data));
  else for (const line of Array.isArray(human) ? human : [human]) io.out(line);
}
