import * as z from 'zod';
import {
  certificateWithKey,
  httpsUrl,
  optionalText,
  settingsReader,
  wholeNumber,
} from '../shared/variables.js';
import { isTimeZone } from './local-time.js';

/** How the upstream case store connects and authenticates (files hold the secrets). */
export interface UpstreamSettings {
  readonly connections: number;
  /** The whole call, retries included. */
  readonly timeoutMs: number;
  readonly retries: number;
  /** The IANA zone in which a date-time the upstream sends without an offset is read. */
  readonly timeZone: string;
  /** The most of one answer's body that is read; a longer one is refused (502). */
  readonly maxBodyBytes: number;
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  readonly tlsCaFile?: string;
  /**
   * What the token endpoint's certificate is verified with, when not `tlsCaFile`: a PEM file,
   * or {@link SYSTEM_CAS} (the runtime's public CAs, for a public identity provider in front
   * of an upstream behind a private CA).
   */
  readonly tokenTlsCa?: string;
  readonly apiKeyFile?: string;
  readonly bearerFile?: string;
  readonly tokenUrl?: string;
  readonly clientId?: string;
  readonly clientSecretFile?: string;
}

/** `UPSTREAM_TOKEN_TLS_CA=system`: the runtime's public CAs, not a file (libpq's `sslrootcert=system`). */
export const SYSTEM_CAS = 'system';

/**
 * `UPSTREAM_MAX_BODY_BYTES` unless set. The largest fixture case is 6.4 KB and a full page of
 * 100 risk scores about 40 KB: 1 MiB leaves a wide margin, and bounds what twenty answers
 * read at once can hold to 20 MiB.
 */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

const variables = z
  .object({
    UPSTREAM_CONNECTIONS: wholeNumber('UPSTREAM_CONNECTIONS', 16, 1, 1024),
    UPSTREAM_TIMEOUT_MS: wholeNumber('UPSTREAM_TIMEOUT_MS', 2000, 50, 60_000),
    UPSTREAM_RETRIES: wholeNumber('UPSTREAM_RETRIES', 2, 0, 5),
    UPSTREAM_MAX_BODY_BYTES: wholeNumber('UPSTREAM_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1024, 67_108_864),
    UPSTREAM_TIME_ZONE: z
      .string()
      .default('Europe/London')
      .refine(isTimeZone, 'UPSTREAM_TIME_ZONE must be an IANA time zone, such as Europe/London or UTC'),
    UPSTREAM_TLS_CERT: optionalText(),
    UPSTREAM_TLS_KEY: optionalText(),
    UPSTREAM_TLS_CA: optionalText(),
    UPSTREAM_API_KEY_FILE: optionalText(),
    UPSTREAM_BEARER_FILE: optionalText(),
    UPSTREAM_TOKEN_URL: httpsUrl().optional(),
    UPSTREAM_TOKEN_TLS_CA: optionalText(),
    UPSTREAM_CLIENT_ID: optionalText(),
    UPSTREAM_CLIENT_SECRET_FILE: optionalText(),
  })
  .superRefine((env, ctx) => {
    certificateWithKey(env, ctx, 'UPSTREAM_TLS_CERT', 'UPSTREAM_TLS_KEY');
    if (env.UPSTREAM_TOKEN_URL === undefined) {
      if (env.UPSTREAM_TOKEN_TLS_CA !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['UPSTREAM_TOKEN_TLS_CA'],
          message: 'only with UPSTREAM_TOKEN_URL',
        });
      }
      return;
    }
    const tokenUrl = URL.canParse(env.UPSTREAM_TOKEN_URL) ? new URL(env.UPSTREAM_TOKEN_URL) : undefined;
    // A value that is no URL is httpUrl's to refuse: this check runs on it too.
    if (env.UPSTREAM_TOKEN_TLS_CA !== undefined && tokenUrl !== undefined && tokenUrl.protocol !== 'https:') {
      // The CA would be ignored: a loopback http:// endpoint makes no TLS handshake.
      ctx.addIssue({
        code: 'custom',
        path: ['UPSTREAM_TOKEN_TLS_CA'],
        message: 'only with an https:// UPSTREAM_TOKEN_URL (an http:// one has no certificate to verify)',
      });
    }
    for (const name of ['UPSTREAM_CLIENT_ID', 'UPSTREAM_CLIENT_SECRET_FILE'] as const) {
      if (env[name] === undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'required with UPSTREAM_TOKEN_URL' });
      }
    }
    if (env.UPSTREAM_BEARER_FILE !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPSTREAM_BEARER_FILE'],
        message: 'a static bearer and OAuth2 client credentials (UPSTREAM_TOKEN_URL) are exclusive',
      });
    }
  });

const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };

/** The `UPSTREAM_*` variables: the upstream kind's own settings. */
export const upstreamSettings = settingsReader(
  variables,
  (v): UpstreamSettings => ({
    connections: v.UPSTREAM_CONNECTIONS,
    timeoutMs: v.UPSTREAM_TIMEOUT_MS,
    retries: v.UPSTREAM_RETRIES,
    timeZone: v.UPSTREAM_TIME_ZONE,
    maxBodyBytes: v.UPSTREAM_MAX_BODY_BYTES,
    ...defined({
      tlsCertFile: v.UPSTREAM_TLS_CERT,
      tlsKeyFile: v.UPSTREAM_TLS_KEY,
      tlsCaFile: v.UPSTREAM_TLS_CA,
      apiKeyFile: v.UPSTREAM_API_KEY_FILE,
      bearerFile: v.UPSTREAM_BEARER_FILE,
      tokenUrl: v.UPSTREAM_TOKEN_URL,
      tokenTlsCa: v.UPSTREAM_TOKEN_TLS_CA,
      clientId: v.UPSTREAM_CLIENT_ID,
      clientSecretFile: v.UPSTREAM_CLIENT_SECRET_FILE,
    }),
  }),
);
