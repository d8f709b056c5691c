import type { RunningServer } from '../adapters/node/server.js';
import { type ProbeOutcome, probeWithoutCertificate } from '../adapters/node/tls-probe.js';
import type { Runtime } from './runtime.js';

/** Where this process reaches its own listener: an unspecified address is reached on loopback. */
export const reachableHost = (host: string) =>
  host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;

/**
 * Why the listener must not serve, or undefined when it may. Identity is the verified client
 * certificate (or a verified gateway's): a listener that cannot demand one would let anyone
 * claim any identity. Never fail open: the listener must say it verifies, and must be seen
 * to, refusing this process's own request without a certificate (a runtime may ignore the
 * setting: Deno.serve does).
 */
export async function whyNotMutualTls(
  server: Pick<RunningServer, 'verifiesClientCertificates' | 'port'>,
  host: string,
  runtime: Pick<Runtime, 'name' | 'version'>,
  probe: (host: string, port: number) => Promise<ProbeOutcome> = probeWithoutCertificate,
): Promise<string | undefined> {
  if (!server.verifiesClientCertificates) {
    return 'the HTTPS listener on this runtime cannot verify client certificates; refusing to serve without mutual TLS';
  }
  const outcome = await probe(reachableHost(host), server.port);
  if (outcome === 'refused') return undefined;
  const seen =
    outcome === 'answered'
      ? 'answered a request without a client certificate'
      : 'did not refuse a client without a certificate in time';
  return `the HTTPS listener ${seen} on ${runtime.name} ${runtime.version}; refusing to serve without mutual TLS`;
}
