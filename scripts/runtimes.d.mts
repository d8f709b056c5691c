/** A JavaScript runtime the service runs on, as a command line: `COMMAND ...ARGS bin/case-read.js`. */
export interface RuntimeCommand {
  readonly name: 'node' | 'bun' | 'deno';
  readonly command: string;
  readonly args: readonly string[];
}
export declare const NODE: RuntimeCommand;
export declare const BUN: RuntimeCommand;
/** The Deno permission flags the service runs with. */
export declare const DENO_PERMISSIONS: readonly string[];
export declare const DENO: RuntimeCommand;
/** Every runtime the service supports, Node first. */
export declare const RUNTIMES: readonly RuntimeCommand[];
/** The runtime running this process. */
export declare const CURRENT: RuntimeCommand;
