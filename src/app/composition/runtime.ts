import { detectRuntime, type RuntimeGlobals, type RuntimeName } from '../../adapters/shared/runtime.js';
import { batchedFetch } from '../../adapters/tls-listener/batched-fetch.js';
import {
  type ClientCertificates,
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
  /**
   * Whether its TLS checks `TLS_CRL` in the handshake. Bun's cannot load a CRL at all;
   * Deno's takes one and ignores it (a certificate on the CRL completes the handshake and is
   * answered), so neither may be given one.
   */
  readonly checksCrl: boolean;
}

const LISTENERS: Record<RuntimeName, TlsListenerKind> = { node: 'https', bun: 'tls-handoff', deno: 'https' };
const CHECKS_CRL: Record<RuntimeName, boolean> = { node: true, bun: false, deno: false };

export function runtimeOf(globals?: RuntimeGlobals): Runtime {
  const runtime = detectRuntime(globals);
  return { ...runtime, tlsListener: LISTENERS[runtime.name], checksCrl: CHECKS_CRL[runtime.name] };
}

/** Why this runtime must not be given a CRL (`TLS_CRL`), if it must not. */
export function whyNotCrl(crlPath: string | undefined, runtime: Runtime): string | undefined {
  if (crlPath === undefined || runtime.checksCrl) return undefined;
  return `TLS_CRL: ${runtime.name}'s TLS does not check a CRL, and serving without it would accept revoked certificates; leave TLS_CRL unset here and revoke certificates with \`case-read certs revoke SERIAL\`, which the service checks on every request (or run on Node)`;
}

export type { RunningServer };

/**
 * A TLS listener of this runtime's kind that asks `clientCertificates` of its clients, handing
 * requests to the app a batch at a time (see `batchedFetch`).
 */
const tlsListenerAsking =
  (clientCertificates: ClientCertificates) =>
  (
    fetch: (request: Request, env?: unknown) => Response | Promise<Response>,
    options: ListenerSettings & { readonly tls: TlsFiles },
    runtime: Runtime,
  ): Promise<RunningServer> =>
    startServer(batchedFetch(fetch), {
      ...listenOptionsOf(options),
      tls: options.tls,
      clientCertificates,
      tlsListener: runtime.tlsListener,
    });

/** The API's mutual-TLS listener for this runtime, handing requests to the app a batch at a time. */
export const startApiListener = tlsListenerAsking('required');

/**
 * The SAR service's door (decisions §23): HTTPS with the service's own certificate, asking no
 * client certificate, on the same listener kind as the API's for this runtime, so with the
 * same TLS settings, slow-client limits and hand-off (a batch at a time).
 */
export const startSarListener = tlsListenerAsking('none');

/** The plain-HTTP management listener: health and metrics, no case data, no credentials. */
export const startManagementListener = (
  fetch: (request: Request) => Response | Promise<Response>,
  options: ListenerSettings,
): Promise<RunningServer> => startServer(fetch, listenOptionsOf(options));

/** Where a listener binds, and how long it keeps an idle keep-alive connection (`KEEP_ALIVE_TIMEOUT_MS`). */
export interface ListenerSettings {
  readonly host: string;
  readonly port: number;
  readonly keepAliveTimeoutMs: number;
}

const listenOptionsOf = ({ host, port, keepAliveTimeoutMs }: ListenerSettings) => ({
  host,
  port,
  limits: { keepAliveTimeoutMs },
});

/** Why the API listener must not serve (see `whyNotMutualTls`), probed with a real TLS client. */
export const whyNotServe = (
  server: RunningServer,
  host: string,
  runtime: Runtime,
): Promise<string | undefined> => whyNotMutualTls(server, host, runtime, probeWithoutCertificate);
