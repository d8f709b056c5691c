import { detectRuntime, type RuntimeGlobals, type RuntimeName } from '../../adapters/shared/runtime.js';
import { batchedFetch } from '../../adapters/tls-listener/batched-fetch.js';
import {
  type RunningServer,
  startServer,
  type TlsFiles,
  type TlsListenerKind,
} from '../../adapters/tls-listener/server.js';
import { probeWithoutCertificate } from '../../adapters/tls-listener/tls-probe.js';
import { whyNotMutualTls } from '../listener-check.js';

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

export type { RunningServer };

/**
 * The API's mutual-TLS listener for this runtime, handing requests to the app a batch at a
 * time (see `batchedFetch`).
 */
export const startApiListener = (
  fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
  options: { readonly host: string; readonly port: number; readonly tls: TlsFiles },
  runtime: Runtime,
): Promise<RunningServer> =>
  startServer(batchedFetch(fetch), { ...options, tlsListener: runtime.tlsListener });

/** The plain-HTTP management listener: health and metrics, no case data, no credentials. */
export const startManagementListener = (
  fetch: (request: Request) => Response | Promise<Response>,
  options: { readonly host: string; readonly port: number },
): Promise<RunningServer> => startServer(fetch, options);

/** Why the API listener must not serve (see `whyNotMutualTls`), probed with a real TLS client. */
export const whyNotServe = (
  server: RunningServer,
  host: string,
  runtime: Runtime,
): Promise<string | undefined> => whyNotMutualTls(server, host, runtime, probeWithoutCertificate);
