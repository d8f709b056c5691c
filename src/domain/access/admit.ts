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
import type { ApiKeyRecord, BearerClaims, Caller, Client, ClientCertificate } from './model.js';
import type { Permission } from './permissions.js';

export interface AdmitClientDeps {
  readonly directory: Pick<
    AccessDirectory,
    'findApiKey' | 'findClient' | 'isCertificateRevoked' | 'heldAdmission'
  >;
  readonly hasher: SecretHasher;
  readonly clock: Clock;
}

/** A client admitted by its certificate and API key. */
export interface Admission {
  readonly client: Client;
  readonly key: ApiKeyRecord;
}

/** The presented API key's id and secret; refused when missing or not of the key shape. */
function presentedKeyOf(presentedKey: string | undefined): { id: string; secret: string } {
  if (presentedKey === undefined || presentedKey.length === 0) throw new AccessDeniedError('missing-key');
  const parsed = parseApiKey(presentedKey);
  if (parsed === undefined) throw new AccessDeniedError('malformed-key');
  return parsed;
}

/** Step 3: the stored key must exist, match the secret, be live now, and belong to the certificate's client. */
function liveKeyOf(
  { hasher, clock }: Pick<AdmitClientDeps, 'hasher' | 'clock'>,
  presented: { id: string; secret: string },
  key: ApiKeyRecord | undefined,
  certificate: ClientCertificate,
): ApiKeyRecord {
  if (key === undefined) throw new AccessDeniedError('unknown-key');
  if (!hasher.matches(presented.secret, key.secretHash)) throw new AccessDeniedError('wrong-key');
  const now = clock.now().getTime();
  if (key.revokedAt !== null && key.revokedAt.getTime() <= now) throw new AccessDeniedError('revoked-key');
  if (key.expiresAt !== null && key.expiresAt.getTime() <= now) throw new AccessDeniedError('expired-key');
  if (key.clientId !== certificate.commonName) throw new AccessDeniedError('key-of-another-client');
  return key;
}

/** Step 4: the client must be known and not suspended. */
function activeClientOf(client: Client | undefined): Client {
  if (client === undefined) throw new AccessDeniedError('unknown-client');
  if (client.suspended) throw new AccessDeniedError('suspended-client');
  return client;
}

/**
 * Steps 3 and 4 of the request pipeline: the API key must be a live key of the client
 * named by the certificate, and that client must be known, not suspended, and not
 * presenting a revoked certificate. Fails closed with {@link AccessDeniedError}.
 */
export async function admitClient(
  deps: AdmitClientDeps,
  certificate: ClientCertificate,
  presentedKey: string | undefined,
): Promise<Admission> {
  const presented = presentedKeyOf(presentedKey);
  const { directory } = deps;
  const key = liveKeyOf(deps, presented, await directory.findApiKey(presented.id), certificate);
  const client = activeClientOf(await directory.findClient(certificate.commonName));
  if (await directory.isCertificateRevoked(certificate.serialNumber, client.id)) {
    throw new AccessDeniedError('revoked-certificate');
  }
  return { client, key };
}

/**
 * {@link admitClient} decided at once from what the directory holds now (its
 * `heldAdmission`), with no promise to wait on: the same checks in the same order, the same
 * refusals. `undefined` when the directory does not hold all it needs; then `admitClient`.
 */
export function admitClientHeld(
  deps: AdmitClientDeps,
  certificate: ClientCertificate,
  presentedKey: string | undefined,
): Admission | undefined {
  const presented = presentedKeyOf(presentedKey);
  const held = deps.directory.heldAdmission?.(presented.id, certificate.commonName, certificate.serialNumber);
  if (held === undefined) return undefined;
  const key = liveKeyOf(deps, presented, held.key, certificate);
  const client = activeClientOf(held.client);
  if (held.revoked) throw new AccessDeniedError('revoked-certificate');
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
  if (bearerNeedsNoToken(mode, token)) return;
  bearerClaimsFit(await verifier.verifyBearer(token as string), certificate);
}

/**
 * {@link checkBearer} decided at once, when the verifier holds the token as verified (its
 * `heldBearer`): true once it passed (or none was needed), the same refusals thrown;
 * false when the token must be verified (then `checkBearer`).
 */
export function checkBearerHeld(
  { verifier }: { verifier: Pick<TokenVerifier, 'heldBearer'> },
  mode: BearerMode,
  certificate: ClientCertificate,
  token: string | undefined,
): boolean {
  if (bearerNeedsNoToken(mode, token)) return true;
  const claims = verifier.heldBearer?.(token as string);
  if (claims === undefined) return false;
  checkHeldBearer(mode, certificate, claims);
  return true;
}

/** Step 6 for a token sent that the verifier holds (these are its claims): as `checkBearer` decides it. */
export function checkHeldBearer(
  mode: BearerMode,
  certificate: ClientCertificate,
  claims: BearerClaims,
): void {
  if (mode !== 'off') bearerClaimsFit(claims, certificate);
}

/** True when no token is to be checked: bearer tokens off, or none sent where they are optional. */
function bearerNeedsNoToken(mode: BearerMode, token: string | undefined): boolean {
  if (mode === 'off') return true;
  if (token !== undefined) return false;
  if (mode === 'required') throw new UnauthenticatedError('bearer', 'a bearer token is required', true);
  return true;
}

/** A verified token must be this client's and, when certificate-bound, this certificate's. */
function bearerClaimsFit(claims: BearerClaims, certificate: ClientCertificate): void {
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
  if (token === undefined) return withoutOnBehalfOf(client);
  if (client.onBehalfOf.mode === 'forbidden') throw new OnBehalfOfNotAllowedError();
  const claims = await verifier.verifyOnBehalfOf(token, client.onBehalfOf);
  requireBoundTo('on-behalf-of', claims.certificateThumbprint, certificate);
  return { email: claims.email, token };
}

/**
 * Step 7 for a request with no on-behalf-of token: refused when the client must send one,
 * else none (null). Decided at once.
 */
export function withoutOnBehalfOf(client: Client): null {
  if (client.onBehalfOf.mode === 'required') {
    throw new UnauthenticatedError(
      'on-behalf-of',
      'an X-On-Behalf-Of token is required for this client',
      true,
    );
  }
  return null;
}

const permissionSets = new WeakMap<Client, ReadonlySet<Permission>>();

/**
 * Step 8 without an on-behalf-of user: the client's own permissions as a set, made once per
 * client record (the directory hands out the same frozen record until the client changes,
 * and a changed client is a new record).
 */
export function basePermissions(client: Client): ReadonlySet<Permission> {
  let permissions = permissionSets.get(client);
  if (permissions === undefined) {
    permissions = new Set<Permission>(client.permissions);
    permissionSets.set(client, permissions);
  }
  return permissions;
}

/** Step 8, first half: the client's base permissions widened by the user's grants. */
export async function effectivePermissions(
  { directory }: { directory: Pick<AccessDirectory, 'grantsFor'> },
  client: Client,
  onBehalfOf: { email: string } | null,
): Promise<ReadonlySet<Permission>> {
  if (onBehalfOf === null) return basePermissions(client);
  const permissions = new Set<Permission>(client.permissions);
  for (const granted of await directory.grantsFor(onBehalfOf.email)) permissions.add(granted);
  return permissions;
}

/** Step 8, second half: deny by default. */
export function requirePermission(caller: Pick<Caller, 'permissions'>, permission: Permission): void {
  if (!caller.permissions.has(permission)) throw new PermissionDeniedError(permission);
}
