/** The JavaScript runtimes the service runs on: the one list. */
export const RUNTIMES = ['node', 'bun', 'deno'] as const;
export type RuntimeName = (typeof RUNTIMES)[number];

/** The globals that tell the runtimes apart (a test hands in its own). */
export interface RuntimeGlobals {
  readonly Bun?: { readonly version: string };
  readonly Deno?: { readonly version: { readonly deno: string } };
  readonly process?: { readonly versions?: { readonly node?: string } };
}

/**
 * Which runtime this process runs on, and its version: the one place that asks. Bun and
 * Deno both also offer `process.versions.node`, so their own globals are asked first.
 */
export function detectRuntime(globals: RuntimeGlobals = globalThis as RuntimeGlobals): {
  readonly name: RuntimeName;
  readonly version: string;
} {
  if (globals.Bun !== undefined) return { name: 'bun', version: globals.Bun.version };
  if (globals.Deno !== undefined) return { name: 'deno', version: globals.Deno.version.deno };
  return { name: 'node', version: globals.process?.versions?.node ?? 'unknown' };
}
