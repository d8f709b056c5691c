/** What a TLS connection without a client certificate met: a refused handshake, an HTTP answer, or nothing in time. */
export type ProbeOutcome = 'refused' | 'answered' | 'timeout';

/** The listener as this check sees it. */
export interface ProbedListener {
  /** Whether the listener says it demands and verifies client certificates. */
  readonly verifiesClientCertificates: boolean;
  readonly port: number;
}

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
  server: ProbedListener,
  host: string,
  runtime: { readonly name: string; readonly version: string },
  probe: (host: string, port: number) => Promise<ProbeOutcome>,
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
