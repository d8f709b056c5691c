import { StoreError, type StoreKind } from '../../ports/stores.js';
import { certificateAndKey, certificateBundle } from '../shared/certificates.js';
import { closeOnce } from '../shared/close-once.js';
import { HTTPS_ONLY, isEncryptedOrLoopback, isLoopbackHost } from '../shared/loopback.js';
import {
  readNamedFile,
  readNamedFileAsync,
  readSecretFile,
  readSecretFileAsync,
} from '../shared/secret-files.js';
import { parsedUrl } from '../shared/store-urls.js';
import type { TokenEndpointTls } from './bearer.js';
import { SYSTEM_CAS, type UpstreamSettings, upstreamSettings } from './settings.js';

const HTTP_URL = /^https?:\/\//;

function upstreamUrlProblem(url: string): string | undefined {
  const parsed = parsedUrl(url);
  if (parsed === undefined) return 'expected https://HOST[:PORT][/BASE]';
  if (parsed.username !== '' || parsed.password !== '') {
    return 'put no credentials in the upstream URL; use UPSTREAM_API_KEY_FILE, UPSTREAM_BEARER_FILE or a client certificate';
  }
  if (parsed.search !== '' || parsed.hash !== '') return 'the upstream URL takes no query or fragment';
  // Cases, API keys and bearer tokens travel on it (decisions §17).
  if (!isEncryptedOrLoopback(parsed)) return HTTPS_ONLY;
  return undefined;
}

const refuse = (message: string) => new StoreError(message);

/** Reads a PEM file named by a variable; the message names the variable, never the contents. */
function fileOf(variable: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  return readNamedFile(variable, path, refuse).trim();
}

/** {@link fileOf} for a key or a secret: refused too when others can read or write the file. */
function secretOf(variable: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  return readSecretFile(variable, path, refuse).trim();
}

/** {@link fileOf} without blocking the event loop: for a reload. */
async function fileOfAsync(variable: string, path: string | undefined): Promise<string | undefined> {
  return path === undefined ? undefined : (await readNamedFileAsync(variable, path, refuse)).trim();
}

/** {@link secretOf} without blocking the event loop: for a reload. */
async function secretOfAsync(variable: string, path: string | undefined): Promise<string | undefined> {
  return path === undefined ? undefined : (await readSecretFileAsync(variable, path, refuse)).trim();
}

/** The upstream's TLS files as read (each absent when its variable is not set). */
interface UpstreamTlsTexts {
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
  readonly tokenCa: string | undefined;
}

/** `UPSTREAM_TOKEN_TLS_CA` when it names a file (not `system`). */
const tokenCaFile = (settings: UpstreamSettings): string | undefined =>
  settings.tokenTlsCa === SYSTEM_CAS ? undefined : settings.tokenTlsCa;

/** The upstream's TLS files that are set: the client certificate and key, the CA, the token endpoint's CA. */
const upstreamTlsFiles = (settings: UpstreamSettings): string[] =>
  [settings.tlsCertFile, settings.tlsKeyFile, settings.tlsCaFile, tokenCaFile(settings)].filter(
    (f): f is string => f !== undefined,
  );

/**
 * The upstream's TLS files, read and checked (the key is the certificate's and not readable
 * by others, the certificate valid now, each CA bundle parses), and the client certificate
 * they present. Read at start and at each reload. The token endpoint (`UPSTREAM_TOKEN_URL`)
 * is verified with `UPSTREAM_TOKEN_TLS_CA` when set (`system`: the runtime's public CAs),
 * else with the upstream's own `UPSTREAM_TLS_CA`, and is presented the same client
 * certificate, since it is often behind the same private CA and asks for the same client.
 */
function readUpstreamTls(settings: UpstreamSettings) {
  return upstreamTlsOf(settings, {
    ca: fileOf('UPSTREAM_TLS_CA', settings.tlsCaFile),
    cert: fileOf('UPSTREAM_TLS_CERT', settings.tlsCertFile),
    key: secretOf('UPSTREAM_TLS_KEY', settings.tlsKeyFile),
    tokenCa: fileOf('UPSTREAM_TOKEN_TLS_CA', tokenCaFile(settings)),
  });
}

/** {@link readUpstreamTls} for a reload: the files read without blocking the event loop. */
async function reloadUpstreamTls(settings: UpstreamSettings) {
  const [ca, cert, key, tokenCa] = await Promise.all([
    fileOfAsync('UPSTREAM_TLS_CA', settings.tlsCaFile),
    fileOfAsync('UPSTREAM_TLS_CERT', settings.tlsCertFile),
    secretOfAsync('UPSTREAM_TLS_KEY', settings.tlsKeyFile),
    fileOfAsync('UPSTREAM_TOKEN_TLS_CA', tokenCaFile(settings)),
  ]);
  return upstreamTlsOf(settings, { ca, cert, key, tokenCa });
}

/** The upstream's TLS files checked, and what the upstream's and the token endpoint's pools are given. */
function upstreamTlsOf(settings: UpstreamSettings, { ca, cert, key, tokenCa }: UpstreamTlsTexts) {
  try {
    if (ca !== undefined) certificateBundle('UPSTREAM_TLS_CA', ca);
    if (tokenCa !== undefined) certificateBundle('UPSTREAM_TOKEN_TLS_CA', tokenCa);
    const inUse =
      cert !== undefined && key !== undefined
        ? certificateAndKey({ cert: 'UPSTREAM_TLS_CERT', key: 'UPSTREAM_TLS_KEY' }, { cert, key }, new Date())
        : undefined;
    const client = { ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
    const tokenEndpointCa = settings.tokenTlsCa === undefined ? ca : tokenCa;
    const tokenTls: TokenEndpointTls = { ...(tokenEndpointCa ? { ca: tokenEndpointCa } : {}), ...client };
    return { tls: { ...(ca ? { ca } : {}), ...client }, tokenTls, inUse };
  } catch (error) {
    throw new StoreError((error as Error).message);
  }
}

/**
 * `https://HOST[:PORT][/BASE]` (`http://` only to a loopback host): cases read from the system
 * of record, which speaks this service's `/case/…` API. Read-only: it cannot be written by
 * `cases import`.
 */
export const upstreamStores: StoreKind<UpstreamSettings> = {
  name: 'upstream',
  form: 'https://UPSTREAM',
  recognises: (url) => HTTP_URL.test(url),
  problem: upstreamUrlProblem,
  display: (url) => url,
  settings: upstreamSettings,
  hop: (url) => {
    const { protocol, hostname, port } = new URL(url);
    const https = protocol === 'https:';
    return {
      to: `${hostname}:${port || (https ? 443 : 80)}`,
      loopback: isLoopbackHost(hostname),
      // https:// verifies the chain and the host name (with UPSTREAM_TLS_CA for a private CA).
      tls: https ? 'verify-full' : 'none',
      fix: 'use https://',
    };
  },
  cases: {
    decidesLimitedAccess: true,
    open: async (url, context) => {
      const settings = context.settings;
      const { UpstreamCaseRepository } = await import('./case-repository.js');
      const { clientCredentialsBearer } = await import('./bearer.js');
      const initial = readUpstreamTls(settings);
      const tls = initial.tls;
      // The client certificate in use: replaced by each reload.
      let inUse = initial.inUse;
      const tlsFiles = upstreamTlsFiles(settings);
      const apiKey = secretOf('UPSTREAM_API_KEY_FILE', settings.apiKeyFile);
      const staticBearer = secretOf('UPSTREAM_BEARER_FILE', settings.bearerFile);
      const tokens =
        staticBearer === undefined && settings.tokenUrl !== undefined
          ? clientCredentialsBearer({
              tokenUrl: settings.tokenUrl,
              clientId: settings.clientId ?? '',
              clientSecret: secretOf('UPSTREAM_CLIENT_SECRET_FILE', settings.clientSecretFile) ?? '',
              timeoutMs: settings.timeoutMs,
              maxBodyBytes: settings.maxBodyBytes,
              tls: initial.tokenTls,
            })
          : undefined;
      const bearer = staticBearer !== undefined ? async () => staticBearer : tokens;
      const repository = new UpstreamCaseRepository({
        baseUrl: url,
        connections: settings.connections,
        timeoutMs: settings.timeoutMs,
        retries: settings.retries,
        timeZone: settings.timeZone,
        maxBodyBytes: settings.maxBodyBytes,
        tls,
        ...(apiKey ? { apiKey } : {}),
        ...(bearer ? { bearer } : {}),
        ...(context.observeUpstream ? { observe: context.observeUpstream } : {}),
        ...(context.tracing ? { tracing: context.tracing } : {}),
      });
      const auth = [
        tls.cert ? 'client certificate' : '',
        apiKey ? 'API key' : '',
        staticBearer ? 'static bearer' : settings.tokenUrl ? 'OAuth2 client credentials' : '',
      ].filter(Boolean);
      return {
        value: repository,
        description: `${url} (upstream; ${auth.join(', ') || 'no authentication'}; timeout ${settings.timeoutMs} ms, ${settings.retries} retries; local times in ${settings.timeZone})`,
        // Readiness reports the breaker: open means every read is being refused.
        ping: async () => {
          if (repository.circuitOpen) throw new Error('the upstream circuit is open');
        },
        // The token endpoint's pool too: its connections end with the store.
        close: closeOnce(async () => {
          await repository.close();
          await tokens?.close();
        }),
        ...(tlsFiles.length > 0
          ? {
              tls: {
                name: 'upstream-client',
                files: tlsFiles,
                current: () => inUse,
                reload: async () => {
                  const next = await reloadUpstreamTls(settings);
                  repository.setTls(next.tls);
                  // The token endpoint follows: the same client certificate, its CA.
                  tokens?.setTls(next.tokenTls);
                  inUse = next.inUse;
                  return inUse;
                },
              },
            }
          : {}),
      };
    },
  },
};
