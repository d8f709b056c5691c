import type { TlsListenerKind } from '../adapters/node/server.js';
import { detectRuntime, type RuntimeGlobals, type RuntimeName } from '../adapters/shared/runtime.js';

/** The JavaScript runtime this process runs on, and what the composition root picks for it. */
export interface Runtime {
  readonly name: RuntimeName;
  readonly version: string;
  /**
   * The mutual-TLS listener that hands the app a verified peer certificate here: Bun's
   * `node:https` does not (its sockets have no `getPeerCertificate`), its `node:tls` does.
   */
  readonly tlsListener: TlsListenerKind;
}

const LISTENERS: Record<RuntimeName, TlsListenerKind> = { node: 'https', bun: 'tls-handoff', deno: 'https' };

export function runtimeOf(globals?: RuntimeGlobals): Runtime {
  const runtime = detectRuntime(globals);
  return { ...runtime, tlsListener: LISTENERS[runtime.name] };
}
