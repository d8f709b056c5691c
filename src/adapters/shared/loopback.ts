/**
 * Whether a URL's host is this machine's loopback (127.0.0.0/8, ::1, localhost): the one place
 * a hop may go without TLS, since it never leaves the host (a sidecar proxy in the same pod,
 * a test's stand-in). Decisions §17.
 */
export function isLoopbackHost(hostname: string): boolean {
  // `localhost` itself, never a name under it: `x.localhost` may be handed to DNS, whose answer
  // can be any address. `URL` gives an IPv6 host in brackets.
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  return /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** An `https://` URL, or an `http://` one to a loopback host. False for anything else. */
export function isEncryptedOrLoopback(url: URL): boolean {
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** What a refused URL is told: the one sentence every such variable shares. */
export const HTTPS_ONLY =
  'expected an https:// URL (http:// only to a loopback host: 127.0.0.1, ::1, localhost)';
