import type { ApiKeyRecord, Client } from '../../domain/access/model.js';
import type { Permission } from '../../domain/access/permissions.js';
import type {
  AccessAdministration,
  AccessDirectory,
  CertificateRevocation,
  CertificateSeen,
  HeldAdmission,
  RenewalClaim,
  UserGrant,
} from '../../ports/access-directory.js';

const copy = <T>(value: T): T => structuredClone(value);

/** Clients, keys, grants and revocations held in memory: for tests and `ACCESS_STORE=memory`. */
export class InMemoryAccessDirectory implements AccessDirectory, AccessAdministration {
  private readonly clients = new Map<string, Client>();
  private readonly keys = new Map<string, ApiKeyRecord>();
  private readonly grants = new Map<string, Set<Permission>>();
  private readonly revocations: CertificateRevocation[] = [];
  private readonly seen = new Map<string, CertificateSeen>();
  /** Renewal claims by presented serial: the serial issued for each, null while issuing. */
  private readonly renewals = new Map<string, string | null>();

  async findClient(id: string): Promise<Client | undefined> {
    const client = this.clients.get(id);
    return client && copy(client);
  }

  async findApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const key = this.keys.get(id);
    return key && copy(key);
  }

  async isCertificateRevoked(serialNumber: string, clientId: string): Promise<boolean> {
    return this.revokedNow(serialNumber, clientId);
  }

  heldAdmission(keyId: string, clientId: string, serialNumber: string): HeldAdmission | undefined {
    const key = this.keys.get(keyId);
    const client = this.clients.get(clientId);
    if (key === undefined || client === undefined) return undefined;
    return { key: copy(key), client: copy(client), revoked: this.revokedNow(serialNumber, clientId) };
  }

  private revokedNow(serialNumber: string, clientId: string): boolean {
    return this.revocations.some(
      (r) => r.serialNumber === serialNumber && (r.clientId === null || r.clientId === clientId),
    );
  }

  async grantsFor(email: string): Promise<readonly Permission[]> {
    return [...(this.grants.get(email.toLowerCase()) ?? [])];
  }

  async saveClient(client: Client): Promise<void> {
    this.clients.set(client.id, copy(client));
  }

  async addClient(client: Client): Promise<boolean> {
    if (this.clients.has(client.id)) return false;
    this.clients.set(client.id, copy(client));
    return true;
  }

  /** Read and written with no turn of the event loop between: nothing else can change it meanwhile. */
  async updateClient(id: string, change: (held: Client) => Client): Promise<Client | undefined> {
    const held = this.clients.get(id);
    if (held === undefined) return undefined;
    const changed = { ...change(copy(held)), id };
    this.clients.set(id, copy(changed));
    return changed;
  }

  async removeClient(id: string): Promise<boolean> {
    if (!this.clients.delete(id)) return false;
    this.seen.delete(id);
    for (const [keyId, key] of this.keys) if (key.clientId === id) this.keys.delete(keyId);
    for (let i = this.revocations.length - 1; i >= 0; i--) {
      if (this.revocations[i]?.clientId === id) this.revocations.splice(i, 1);
    }
    return true;
  }

  async listClients(): Promise<Client[]> {
    return [...this.clients.values()].map(copy).sort((a, b) => a.id.localeCompare(b.id));
  }

  async setSuspended(id: string, suspended: boolean): Promise<boolean> {
    const client = this.clients.get(id);
    if (!client) return false;
    this.clients.set(id, { ...client, suspended });
    return true;
  }

  async addApiKey(key: ApiKeyRecord): Promise<void> {
    if (!this.clients.has(key.clientId)) throw new Error(`no client ${key.clientId}`);
    if (this.keys.has(key.id)) throw new Error(`key ${key.id} already exists`);
    this.keys.set(key.id, copy(key));
  }

  async listApiKeys(clientId: string): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()]
      .filter((k) => k.clientId === clientId)
      .map(copy)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  }

  async revokeApiKey(id: string, at: Date): Promise<boolean> {
    const key = this.keys.get(id);
    if (!key) return false;
    if (key.revokedAt === null) this.keys.set(id, { ...key, revokedAt: at });
    return true;
  }

  async revokeCertificate(revocation: CertificateRevocation): Promise<void> {
    const exists = this.revocations.some(
      (r) => r.serialNumber === revocation.serialNumber && r.clientId === revocation.clientId,
    );
    if (!exists) this.revocations.push(copy(revocation));
  }

  async listCertificateRevocations(): Promise<CertificateRevocation[]> {
    return this.revocations.map(copy);
  }

  async noteCertificate(seen: CertificateSeen): Promise<void> {
    if (this.clients.has(seen.clientId)) this.seen.set(seen.clientId, copy(seen));
  }

  async claimRenewal(claim: RenewalClaim): Promise<boolean> {
    if (this.renewals.has(claim.serialNumber)) return false;
    this.renewals.set(claim.serialNumber, null);
    return true;
  }

  async completeRenewal(serialNumber: string, issuedSerialNumber: string | null): Promise<void> {
    // Only a claim still issuing: one that issued keeps its first serial, and stays claimed.
    if (this.renewals.get(serialNumber) !== null) return;
    if (issuedSerialNumber === null) this.renewals.delete(serialNumber);
    else this.renewals.set(serialNumber, issuedSerialNumber);
  }

  async listCertificatesSeen(): Promise<CertificateSeen[]> {
    return [...this.seen.values()].map(copy).sort((a, b) => a.clientId.localeCompare(b.clientId));
  }

  async addGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    const key = email.toLowerCase();
    const held = this.grants.get(key) ?? new Set<Permission>();
    for (const p of permissions) held.add(p);
    this.grants.set(key, held);
  }

  async removeGrant(email: string, permissions: readonly Permission[]): Promise<void> {
    const key = email.toLowerCase();
    const held = this.grants.get(key);
    if (!held) return;
    for (const p of permissions) held.delete(p);
    if (held.size === 0) this.grants.delete(key);
  }

  async listGrants(): Promise<UserGrant[]> {
    return [...this.grants.entries()]
      .map(([email, set]) => ({ email, permissions: [...set].sort() }))
      .sort((a, b) => a.email.localeCompare(b.email));
  }
}
