import type { ApiKeyRecord, Client } from '../domain/access/model.js';
import type { Permission } from '../domain/access/permissions.js';
import type { AccessDirectory } from '../domain/needs.js';

/** The access directory port as the service reads it; its contract is where it is declared. */
export type { AccessDirectory };

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
  /** Adds a client, or replaces the one with the same id. */
  saveClient(client: Client): Promise<void>;
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

  /** Adds permissions to a user's grant (creating it). */
  addGrant(email: string, permissions: readonly Permission[]): Promise<void>;
  /** Removes permissions from a user's grant; the grant goes when it holds none. */
  removeGrant(email: string, permissions: readonly Permission[]): Promise<void>;
  listGrants(): Promise<UserGrant[]>;
}

/** Normalises a certificate serial: upper-case hex, no separators, no leading zeros. */
export function normaliseSerial(serial: string): string {
  const hex = serial.replaceAll(':', '').trim().toUpperCase();
  if (!/^[0-9A-F]+$/.test(hex))
    throw new Error('a certificate serial is hexadecimal, e.g. 4F1A09 or 4f:1a:09');
  return hex.replace(/^0+(?=.)/, '');
}
