import type { LimitedAccessSetting } from './limited-access.js';
import type { Permission } from './permissions.js';
import type { RedactableField } from './redaction.js';

export type OnBehalfOfMode = 'forbidden' | 'optional' | 'required';

/** How a client's on-behalf-of tokens are checked; agreed per consumer. */
export interface OnBehalfOfSettings {
  readonly mode: OnBehalfOfMode;
  /** Expected `iss`, JWKS (file path or https URL), `aud`, and the claim holding the e-mail. */
  readonly issuer: string | null;
  readonly jwks: string | null;
  readonly audience: string | null;
  readonly emailClaim: string;
}

/** A consumer service, identified by the common name (CN) of its client certificate. */
export interface Client {
  readonly id: string;
  readonly permissions: readonly Permission[];
  readonly suspended: boolean;
  /** `N/DURATION`, e.g. `100/1s`; null means the service default. */
  readonly rateLimit: string | null;
  readonly queueArn: string | null;
  readonly roleArn: string | null;
  readonly onBehalfOf: OnBehalfOfSettings;
  /** Fields withheld from this client's answers (data minimisation, decisions §8); [] for none. */
  readonly redact: readonly RedactableField[];
  /** What this client gets on a limited access case when it acts as itself (decisions §8). */
  readonly limitedAccess: LimitedAccessSetting;
}

/** An API key as stored: the secret only as a hash. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly clientId: string;
  readonly secretHash: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
}

/** The verified client certificate of a request (or what a trusted gateway says of it). */
export interface ClientCertificate {
  readonly commonName: string;
  /** Upper-case hex, no separators. */
  readonly serialNumber: string;
  /** base64url SHA-256 of the DER certificate (RFC 8705 `x5t#S256`); null when not known. */
  readonly thumbprintS256: string | null;
  readonly notAfter: Date | null;
}

/** Who is calling, once the perimeter has admitted the request. */
export interface Caller {
  readonly client: Client;
  readonly certificate: ClientCertificate;
  readonly apiKeyId: string;
  /** The verified user, and the token that proved it (a secret: never logged or audited). */
  readonly onBehalfOf: { readonly email: string; readonly token: string } | null;
  readonly permissions: ReadonlySet<Permission>;
}

/** What a verified bearer token says, as far as the domain cares. */
export interface BearerClaims {
  /** `client_id`, else `sub`. */
  readonly clientId: string | null;
  /** `cnf["x5t#S256"]` when the token is certificate-bound. */
  readonly certificateThumbprint: string | null;
  readonly expiresAt: Date;
}

/** What a verified on-behalf-of token says: the user, and the certificate it is bound to, if any. */
export interface OnBehalfOfClaims {
  /** Lower case. */
  readonly email: string;
  /** `cnf["x5t#S256"]` when the token is certificate-bound (it must then be the client's certificate). */
  readonly certificateThumbprint: string | null;
}
