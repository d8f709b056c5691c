import type { ApiKeyRecord, Client } from '../domain/access/model.js';
import type { Permission } from '../domain/access/permissions.js';

/**
 * The access directory port, as the perimeter reads it on every request: clients, API keys,
 * user grants and revoked certificate serials (the CLI writes it through
 * `AccessAdministration`). Contract, checked by `test/contract/access-directory.contract.ts`:
 *
 * - a change is seen by the next read at once on the connection that made it, and on every
 *   instance within the bound the adapter states;
 * - client ids (certificate CNs) are matched exactly; e-mails case-insensitively;
 *   certificate serials as upper-case hex without leading zeros;
 * - only hashes of key secrets are ever stored;
 * - removing a client removes its keys and per-client revocations.
 */
export interface AccessDirectory {
  findClient(id: string): Promise<Client | undefined>;
  findApiKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** True when the serial is revoked globally or for this client. */
  isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean>;
  /**
   * What admitting a request reads (`findApiKey(keyId)`, `findClient(clientId)`,
   * `isCertificateRevoked(serialNumber, clientId)`), answered at once from what this reader
   * holds, as fresh as those three would be now: `undefined` unless it holds all three (a key
   * and a client found, and the revocation answer). The request path then takes no promise
   * turn for them. Absent where nothing is held in the process.
   */
  heldAdmission?(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined;
  /** The permissions granted to a user, by e-mail (case-insensitive); [] when none. */
  grantsFor(email: string): Promise<readonly Permission[]>;
  /**
   * Records the certificate a known client presented (the service calls it when that
   * changes, not per request), replacing the one recorded before. For `clients list`; it
   * is no check. A client that is no longer held records nothing.
   */
  noteCertificate(seen: CertificateSeen): Promise<void>;
  /**
   * Claims the one renewal of the presented certificate `claim.serialNumber` (decisions §12:
   * each certificate renews once, so a stolen old key cannot fork a second line). True when
   * this call claimed it; false when it was claimed before, by any instance, ever (held in
   * the store, so it holds across instances and restarts). Atomic: of two concurrent claims
   * exactly one is true.
   */
  claimRenewal(claim: RenewalClaim): Promise<boolean>;
  /**
   * Completes a claim with the serial of the certificate issued for it, or, with `null`,
   * releases it (issuing failed: the certificate may be renewed again).
   */
  completeRenewal(serialNumber: string, issuedSerialNumber: string | null): Promise<void>;
}

/** The three answers admission reads, held together (see `AccessDirectory.heldAdmission`). */
export interface HeldAdmission {
  readonly key: ApiKeyRecord;
  readonly client: Client;
  readonly revoked: boolean;
}

/** The claim on a presented certificate's one renewal. */
export interface RenewalClaim {
  /** The presented (old) certificate's serial: upper-case hex, no leading zeros. */
  readonly serialNumber: string;
  readonly clientId: string;
  readonly at: Date;
}

/** The certificate a client last presented, as `clients list` shows it (decisions §10). */
export interface CertificateSeen {
  readonly clientId: string;
  /** Upper-case hex, no leading zeros. */
  readonly serialNumber: string;
  readonly notAfter: Date;
  readonly seenAt: Date;
}

export interface UserGrant {
  readonly email: string;
  readonly permissions: readonly Permission[];
}

export interface CertificateRevocation {
  readonly serialNumber: string;
  /** null: revoked for every client. */
  readonly clientId: string | null;
  readonly revokedAt: Date;
}

export interface AccessAdministration {
  /**
   * Adds a client, or replaces the one with the same id, whatever it holds (seeding a store;
   * no command writes through it: they add with `addClient` and change with `updateClient`).
   */
  saveClient(client: Client): Promise<void>;
  /**
   * Adds a client unless one with its id is held: then false, and nothing is written (the one
   * held is never replaced, also when it was added a moment before by another operator: of
   * two concurrent adds of one id exactly one is true).
   */
  addClient(client: Client): Promise<boolean>;
  /**
   * Changes the client held with `id`, atomically: `change` is given the client as held and
   * what it returns is written under the same id, with no other write to that client landing
   * in between, so a concurrent `setSuspended` or update is neither undone nor undoes this
   * one (the later of the two sees the earlier's result). Undefined when no such client is
   * held. When `change` throws nothing is written and the error is thrown. `change` may be
   * called while the store holds a lock: it must be quick and must not write the store.
   */
  updateClient(id: string, change: (held: Client) => Client): Promise<Client | undefined>;
  /** false when no such client was held. */
  removeClient(id: string): Promise<boolean>;
  listClients(): Promise<Client[]>;
  setSuspended(id: string, suspended: boolean): Promise<boolean>;

  addApiKey(key: ApiKeyRecord): Promise<void>;
  listApiKeys(clientId: string): Promise<ApiKeyRecord[]>;
  /** false when no such key was held; revoking twice keeps the first time. */
  revokeApiKey(id: string, at: Date): Promise<boolean>;

  revokeCertificate(revocation: CertificateRevocation): Promise<void>;
  listCertificateRevocations(): Promise<CertificateRevocation[]>;
  /** The certificate each client last presented, by client id; removing a client removes its own. */
  listCertificatesSeen(): Promise<CertificateSeen[]>;

  /** Adds permissions to a user's grant (creating it). */
  addGrant(email: string, permissions: readonly Permission[]): Promise<void>;
  /** Removes permissions from a user's grant; the grant goes when it holds none. */
  removeGrant(email: string, permissions: readonly Permission[]): Promise<void>;
  listGrants(): Promise<UserGrant[]>;
}
