import type { AccessDirectory } from '../../ports/access-directory.js';
import type { Clock } from '../../ports/clock.js';
import type { SecretHasher } from '../../ports/secret-hasher.js';
import type { TokenVerifier } from '../../ports/token-verifier.js';
import {
  AccessDeniedError,
  OnBehalfOfNotAllowedError,
  PermissionDeniedError,
  UnauthenticatedError,
} from '../errors.js';
import { parseApiKey } from './api-key.js';
import type { ApiKeyRecord, Caller, Client, ClientCertificate } from './model.js';
import type { Permission } from './permissions.js';

export interface AdmitClientDeps {
  readonly directory: Pick<AccessDirectory, 'findApiKey' | 'findClient' | 'isCertificateRevoked'>;
  readonly hasher: SecretHasher;
  readonly clock: Clock;
}

/**
 * Steps 3 and 4 of the request pipeline: the API key must be a live key of the client
 * named by the certificate, and that client must be known, not suspended, and not
 * presenting a revoked certificate. Fails closed with {@link AccessDeniedError}.
 */
export async function admitClient(
  { directory, hasher, clock }: AdmitClientDeps,
  certificate: ClientCertificate,
  presentedKey: string | undefined,
): Promise<{ client: Client; key: ApiKeyRecord }> {
  if (presentedKey === undefined || presentedKey.length === 0) throw new AccessDeniedError('missing-key');
  const parsed = parseApiKey(presentedKey);
  if (parsed === undefined) throw new AccessDeniedError('malformed-key');
  const key = await directory.findApiKey(parsed.id);
  if (key === undefined) throw new AccessDeniedError('unknown-key');
  if (!hasher.matches(parsed.secret, key.secretHash)) throw new AccessDeniedError('wrong-key');
  const now = clock.now().getTime();
  if (key.revokedAt !== null && key.revokedAt.getTime() <= now) throw new AccessDeniedError('revoked-key');
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now) throw new AccessDeniedError('expired-key');
  if (key.clientId !== certificate.commonName) throw new AccessDeniedError('key-of-another-client');

  const client = await directory.findClient(certificate.commonName);
  if (client === undefined) throw new AccessDeniedError('unknown-client');
  if (client.suspended) throw new AccessDeniedError('suspended-client');
  if (await directory.isCertificateRevoked(certificate.serialNumber, client.id)) {
    throw new AccessDeniedError('revoked-certificate');
  }
  return { client, key };
}

export type BearerMode = 'required' | 'optional' | 'off';

/**
 * Step 6: the bearer token. In `required` mode it must be present; in `optional` mode it is
 * checked only when sent. A verified token must name this client (`client_id`, else `sub`)
 * and, when certificate-bound (RFC 8705), this very certificate.
 */
export async function checkBearer(
  { verifier }: { verifier: Pick<TokenVerifier, 'verifyBearer'> },
  mode: BearerMode,
  certificate: ClientCertificate,
  token: string | undefined,
): Promise<void> {
  if (mode === 'off') return;
  if (token === undefined) {
    if (mode === 'required') throw new UnauthenticatedError('bearer', 'a bearer token is required', true);
    return;
  }
  const claims = await verifier.verifyBearer(token);
  if (claims.clientId !== certificate.commonName) {
    throw new UnauthenticatedError('bearer', 'the token was not issued to this client');
  }
  requireBoundTo('bearer', claims.certificateThumbprint, certificate);
}

/**
 * RFC 8705: a certificate-bound token is good only with that very certificate. A binding
 * that cannot be checked (the listener knows no thumbprint, as behind a gateway that does
 * not forward the certificate) is refused, never taken as met.
 */
function requireBoundTo(
  scheme: 'bearer' | 'on-behalf-of',
  thumbprint: string | null,
  certificate: ClientCertificate,
): void {
  if (thumbprint !== null && thumbprint !== certificate.thumbprintS256) {
    throw new UnauthenticatedError(scheme, 'the token is bound to another certificate');
  }
}

/**
 * Step 7: the on-behalf-of identity, per the client's settings. Returns the verified
 * e-mail with the token that proved it (a store that decides limited access itself is
 * handed it to relay), or null when none was sent (and none was required).
 */
export async function checkOnBehalfOf(
  { verifier }: { verifier: Pick<TokenVerifier, 'verifyOnBehalfOf'> },
  client: Client,
  certificate: ClientCertificate,
  token: string | undefined,
): Promise<{ email: string; token: string } | null> {
  const { mode } = client.onBehalfOf;
  if (token === undefined) {
    if (mode === 'required') {
      throw new UnauthenticatedError(
        'on-behalf-of',
        'an X-On-Behalf-Of token is required for this client',
        true,
      );
    }
    return null;
  }
  if (mode === 'forbidden') throw new OnBehalfOfNotAllowedError();
  const claims = await verifier.verifyOnBehalfOf(token, client.onBehalfOf);
  requireBoundTo('on-behalf-of', claims.certificateThumbprint, certificate);
  return { email: claims.email, token };
}

/**
 * A client's own permissions as a set, made once per client record: the directory hands out
 * the same frozen record until the client changes, and a changed client is a new record.
 */
const basePermissions = new WeakMap<Client, ReadonlySet<Permission>>();
function permissionsOf(client: Client): ReadonlySet<Permission> {
  let permissions = basePermissions.get(client);
  if (permissions === undefined) {
    permissions = new Set<Permission>(client.permissions);
    basePermissions.set(client, permissions);
  }
  return permissions;
}

/** Step 8, first half: the client's base permissions widened by the user's grants. */
export async function effectivePermissions(
  { directory }: { directory: Pick<AccessDirectory, 'grantsFor'> },
  client: Client,
  onBehalfOf: { email: string } | null,
): Promise<ReadonlySet<Permission>> {
  if (onBehalfOf === null) return permissionsOf(client);
  const permissions = new Set<Permission>(client.permissions);
  for (const granted of await directory.grantsFor(onBehalfOf.email)) permissions.add(granted);
  return permissions;
}

/** Step 8, second half: deny by default. */
export function requirePermission(caller: Pick<Caller, 'permissions'>, permission: Permission): void {
  if (!caller.permissions.has(permission)) throw new PermissionDeniedError(permission);
}
