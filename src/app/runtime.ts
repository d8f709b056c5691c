import type { TlsListenerKind } from '../adapters/node/server.js';

/** The JavaScript runtime this process runs on, and what the composition root picks for it. */
export interface Runtime {
  readonly name: 'node' | 'bun' | 'deno';
  readonly version: string;
  /**
   * The mutual-TLS listener that hands the app a verified peer certificate here: Bun's
   * `node:https` does not (its sockets have no `getPeerCertificate`), its `node:tls` does.
   */
  readonly tlsListener: TlsListenerKind;
}

interface RuntimeGlobals {
  readonly Bun?: { readonly version: string };
  readonly Deno?: { readonly version: { readonly deno: string } };
  readonly process?: { readonly versions?: { readonly node?: string } };
}

export function runtimeOf(globals: RuntimeGlobals = globalThis as RuntimeGlobals): Runtime {
  if (globals.Bun !== undefined)
    return { name: 'bun', version: globals.Bun.version, tlsListener: 'tls-handoff' };
  if (globals.Deno !== undefined)
    return { name: 'deno', version: globals.Deno.version.deno, tlsListener: 'https' };
  return { name: 'node', version: globals.process?.versions?.node ?? 'unknown', tlsListener: 'https' };
}
