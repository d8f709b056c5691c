import type { TlsOptions } from 'node:tls';

/** PEM contents (not paths): server certificate chain, its key, the client CA bundle, an optional CRL. */
export interface TlsFiles {
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string;
  readonly crl?: string;
}

/**
 * Whether a TLS listener asks for a client certificate: `required`, mutual TLS (a client
 * without one from the client CA never completes the handshake), the API's; or `none`, the
 * server's certificate alone, the SAR service's door (decisions §23), whose caller holds no
 * certificate and is known by its token.
 */
export type ClientCertificates = 'required' | 'none';

/**
 * TLS 1.2 suites offered: ECDHE key exchange (forward secrecy) with AEAD ciphers only, no
 * CBC, ARIA, CCM or static RSA. TLS 1.3's own suites are all AEAD and listed explicitly.
 */
export const TLS_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

/**
 * The TLS settings of a listener, whichever form it takes: the same versions and suites for
 * both kinds; the client CA and the CRL only where a client certificate is required (the
 * door ignores them, so the same reloaded set serves both).
 */
export function tlsOptionsOf(tls: TlsFiles, clientCertificates: ClientCertificates = 'required'): TlsOptions {
  const common = {
    cert: tls.cert,
    key: tls.key,
    minVersion: 'TLSv1.2',
    ciphers: TLS_CIPHERS,
    honorCipherOrder: true,
  } as const;
  if (clientCertificates === 'none') return { ...common, requestCert: false };
  return {
    ...common,
    ca: tls.clientCa,
    ...(tls.crl ? { crl: tls.crl } : {}),
    requestCert: true,
    rejectUnauthorized: true,
  };
}
