import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccessAdministration, AccessDirectory } from '../../src/ports/access-directory.js';
import { AccessMother } from '../support/mothers.js';
import { describeClientChanges } from './access-directory.client-changes.js';
import type { OtherOperator } from './access-directory.other-operator.js';

export type AccessStore = AccessDirectory & AccessAdministration;
export interface OpenedAccessStore {
  /** The store the operator writes to. */
  readonly admin: AccessStore;
  /** The store the service reads from (a separate read-only connection where the adapter has one). */
  readonly reader: AccessDirectory;
  /**
   * Closes the reader and opens a new one on the same store, as a restart of the service
   * does; `close` then closes the new one. Absent where the store does not outlive its
   * instance (memory).
   */
  readonly reopen?: () => AccessDirectory | Promise<AccessDirectory>;
  /**
   * A second administration of the same store on a connection of its own, as another
   * operator's (closed by `close`). Absent where the store has one connection alone (memory):
   * `admin` stands in.
   */
  readonly another?: () => AccessStore | Promise<AccessStore>;
  /**
   * Another operator on a thread of its own (see {@link OtherOperator}), closed by the test.
   * Absent where the store lives in this thread alone (memory).
   */
  readonly otherOperator?: () => Promise<OtherOperator>;
  close(): void | Promise<void>;
}

/** The contract of the access directory port, run by every adapter. */
export function describeAccessDirectoryContract(
  name: string,
  open: () => OpenedAccessStore | Promise<OpenedAccessStore>,
): void {
  describe(`AccessDirectory contract: ${name}`, () => {
    let store: OpenedAccessStore;
    let admin: AccessStore;
    let reader: AccessDirectory;
    beforeEach(async () => {
      store = await open();
      admin = store.admin;
      reader = store.reader;
    });
    afterEach(async () => {
      await store.close();
    });

    it('saves, finds, replaces and lists clients with every setting', async () => {
      const client = AccessMother.client('client-a', {
        permissions: ['getCase', 'issueQueueToken'],
        rateLimit: '10/1s',
        queueArn: 'arn:aws:sqs:eu-west-2:000000000000:client-a',
        roleArn: 'arn:aws:iam::000000000000:role/client-a',
        onBehalfOf: {
          mode: 'optional',
          issuer: 'https://idp.example',
          jwks: '/etc/jwks.json',
          audience: 'case-read',
          emailClaim: 'upn',
        },
        redact: ['personalCircumstances', 'communityManager.emailAddress'],
        limitedAccess: 'allow',
      });
      await admin.saveClient(client);
      expect(await reader.findClient('client-a')).toStrictEqual(client);
      await admin.saveClient({ ...client, permissions: ['getCase'] });
      expect((await reader.findClient('client-a'))?.permissions).toEqual(['getCase']);
      await admin.saveClient({ ...client, redact: [] });
      expect((await reader.findClient('client-a'))?.redact).toEqual([]);
      await admin.saveClient({ ...client, limitedAccess: 'deny' });
      expect((await reader.findClient('client-a'))?.limitedAccess).toBe('deny');
      await admin.saveClient(AccessMother.client('client-0'));
      expect((await admin.listClients()).map((c) => c.id)).toEqual(['client-0', 'client-a']);
    });

    it('matches client ids exactly', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      expect(await reader.findClient('CLIENT-A')).toBeUndefined();
      expect(await reader.findClient('client-a ')).toBeUndefined();
      expect(await reader.findClient('client-a')).toBeDefined();
    });

    it('suspends and resumes, seen by the next read', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      expect(await admin.setSuspended('client-a', true)).toBe(true);
      expect((await reader.findClient('client-a'))?.suspended).toBe(true);
      expect(await admin.setSuspended('client-a', false)).toBe(true);
      expect((await reader.findClient('client-a'))?.suspended).toBe(false);
      expect(await admin.setSuspended('nobody', true)).toBe(false);
    });

    it('holds several keys per client and revokes one at once, keeping the first revocation time', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      const expires = new Date('2027-01-01T00:00:00Z');
      await admin.addApiKey(AccessMother.key('key0000000000001', 'client-a', { expiresAt: expires }));
      await admin.addApiKey(
        AccessMother.key('key0000000000002', 'client-a', { createdAt: new Date('2026-02-01T00:00:00Z') }),
      );
      expect((await admin.listApiKeys('client-a')).map((k) => k.id)).toEqual([
        'key0000000000001',
        'key0000000000002',
      ]);
      expect(await reader.findApiKey('key0000000000001')).toStrictEqual(
        AccessMother.key('key0000000000001', 'client-a', { expiresAt: expires }),
      );
      const first = new Date('2026-03-01T00:00:00Z');
      expect(await admin.revokeApiKey('key0000000000001', first)).toBe(true);
      expect(await admin.revokeApiKey('key0000000000001', new Date('2026-04-01T00:00:00Z'))).toBe(true);
      expect((await reader.findApiKey('key0000000000001'))?.revokedAt).toEqual(first);
      expect((await reader.findApiKey('key0000000000002'))?.revokedAt).toBeNull();
      expect(await admin.revokeApiKey('no-such-key00000', first)).toBe(false);
    });

    it('refuses a key for an unknown client, and a duplicate key id', async () => {
      await expect(admin.addApiKey(AccessMother.key('key0000000000009', 'ghost'))).rejects.toThrow(
        /no client ghost/,
      );
      await admin.saveClient(AccessMother.client('client-a'));
      await admin.addApiKey(AccessMother.key('key0000000000009', 'client-a'));
      await expect(admin.addApiKey(AccessMother.key('key0000000000009', 'client-a'))).rejects.toThrow(
        /already exists/,
      );
    });

    it('revokes certificate serials globally or for one client', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      await admin.saveClient(AccessMother.client('client-b'));
      const at = new Date('2026-05-01T00:00:00Z');
      await admin.revokeCertificate({ serialNumber: 'ABC1', clientId: null, revokedAt: at });
      await admin.revokeCertificate({ serialNumber: 'ABC2', clientId: 'client-a', revokedAt: at });
      await admin.revokeCertificate({ serialNumber: 'ABC2', clientId: 'client-a', revokedAt: at });
      expect(await reader.isCertificateRevoked('ABC1', 'client-a')).toBe(true);
      expect(await reader.isCertificateRevoked('ABC1', 'client-b')).toBe(true);
      expect(await reader.isCertificateRevoked('ABC2', 'client-a')).toBe(true);
      expect(await reader.isCertificateRevoked('ABC2', 'client-b')).toBe(false);
      expect(await reader.isCertificateRevoked('ABC3', 'client-a')).toBe(false);
      expect(await admin.listCertificateRevocations()).toHaveLength(2);
    });

    it('keeps user grants by e-mail, case-insensitively, adding and removing permissions', async () => {
      await admin.addGrant('Officer@Probation.Example', ['getCase']);
      await admin.addGrant('officer@probation.example', ['getCommunityManagerByCrn', 'getCase']);
      expect([...(await reader.grantsFor('OFFICER@probation.example'))].sort()).toEqual([
        'getCase',
        'getCommunityManagerByCrn',
      ]);
      await admin.removeGrant('officer@probation.example', ['getCase']);
      expect(await reader.grantsFor('officer@probation.example')).toEqual(['getCommunityManagerByCrn']);
      await admin.removeGrant('officer@probation.example', ['getCommunityManagerByCrn']);
      expect(await reader.grantsFor('officer@probation.example')).toEqual([]);
      expect(await admin.listGrants()).toEqual([]);
      expect(await reader.grantsFor('nobody@probation.example')).toEqual([]);
    });

    it('a change committed through another connection is seen by the next read, cached or not', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      await admin.addApiKey(AccessMother.key('key0000000000001', 'client-a'));
      for (let i = 0; i < 3; i++) expect((await reader.findApiKey('key0000000000001'))?.revokedAt).toBeNull();
      expect(await reader.isCertificateRevoked('CAFE', 'client-a')).toBe(false);
      expect(await reader.grantsFor('a@probation.example')).toEqual([]);
      const at = new Date('2026-07-01T00:00:00Z');
      await admin.revokeApiKey('key0000000000001', at);
      await admin.revokeCertificate({ serialNumber: 'CAFE', clientId: null, revokedAt: at });
      await admin.addGrant('a@probation.example', ['getCase']);
      await admin.setSuspended('client-a', true);
      await admin.saveClient({
        ...(await admin.findClient('client-a'))!,
        suspended: true,
        redact: ['homeOfficeInterest.notes'],
        limitedAccess: 'allow',
      });
      expect((await reader.findClient('client-a'))?.redact).toEqual(['homeOfficeInterest.notes']);
      expect((await reader.findClient('client-a'))?.limitedAccess).toBe('allow');
      expect((await reader.findApiKey('key0000000000001'))?.revokedAt).toEqual(at);
      expect(await reader.isCertificateRevoked('CAFE', 'client-a')).toBe(true);
      expect(await reader.grantsFor('a@probation.example')).toEqual(['getCase']);
      expect((await reader.findClient('client-a'))?.suspended).toBe(true);
    });

    it('held admission: what the three reads answer, at once, never older than they would be', async ({
      skip,
    }) => {
      // Optional: a reader that holds nothing in the process need not offer it (reported skipped).
      const held = () => reader.heldAdmission?.('key0000000000001', 'client-a', 'CAFE');
      if (reader.heldAdmission === undefined) return skip();
      await admin.saveClient(AccessMother.client('client-a'));
      await admin.addApiKey(AccessMother.key('key0000000000001', 'client-a'));
      const read = async () => ({
        key: await reader.findApiKey('key0000000000001'),
        client: await reader.findClient('client-a'),
        revoked: await reader.isCertificateRevoked('CAFE', 'client-a'),
      });
      // Once the three have been read, the reader holds them.
      const first = await read();
      expect(held()).toStrictEqual(first);
      expect(reader.heldAdmission('key0000000000001', 'client-b', 'CAFE')).toBeUndefined();
      expect(reader.heldAdmission('key0000000000009', 'client-a', 'CAFE')).toBeUndefined();
      // Each change is seen at once: what is held is the new answer, or nothing (then read).
      const at = new Date('2026-07-01T00:00:00Z');
      const changes: Array<[() => Promise<unknown>, (h: NonNullable<ReturnType<typeof held>>) => unknown]> = [
        [
          () => admin.revokeCertificate({ serialNumber: 'CAFE', clientId: null, revokedAt: at }),
          (h) => h.revoked,
        ],
        [() => admin.setSuspended('client-a', true), (h) => h.client.suspended],
        [
          () => admin.revokeApiKey('key0000000000001', at),
          (h) => h.key.revokedAt?.getTime() === at.getTime(),
        ],
      ];
      for (const [change, changed] of changes) {
        await change();
        const now = held();
        if (now !== undefined) expect(changed(now)).toBe(true);
        const again = await read();
        expect(changed({ ...again, key: again.key!, client: again.client! })).toBe(true);
        expect(held()).toStrictEqual(again);
      }
      await admin.removeClient('client-a');
      expect(held()).toBeUndefined();
    });

    it('removing a client removes its keys and its own revocations, not global ones', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      await admin.addApiKey(AccessMother.key('key0000000000001', 'client-a'));
      await admin.revokeCertificate({ serialNumber: 'AA', clientId: 'client-a', revokedAt: new Date() });
      await admin.revokeCertificate({ serialNumber: 'BB', clientId: null, revokedAt: new Date() });
      expect(await admin.removeClient('client-a')).toBe(true);
      expect(await reader.findClient('client-a')).toBeUndefined();
      expect(await reader.findApiKey('key0000000000001')).toBeUndefined();
      expect((await admin.listCertificateRevocations()).map((r) => r.serialNumber)).toEqual(['BB']);
      expect(await admin.removeClient('client-a')).toBe(false);
    });

    it('records the certificate each client last presented, through the reader; the client removed takes it', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      await admin.saveClient(AccessMother.client('client-b'));
      const at = new Date('2026-11-23T10:00:00.000Z');
      const first = {
        clientId: 'client-a',
        serialNumber: '1F',
        notAfter: new Date('2027-01-01T00:00:00.000Z'),
        seenAt: at,
      };
      await reader.noteCertificate(first);
      const next = {
        ...first,
        serialNumber: '2E',
        notAfter: new Date('2027-06-30T12:00:00.000Z'),
        seenAt: new Date(at.getTime() + 1000),
      };
      await reader.noteCertificate(next);
      await reader.noteCertificate({ ...first, clientId: 'client-b' });
      // A client that is not held records nothing.
      await reader.noteCertificate({ ...first, clientId: 'client-z' });
      expect(await admin.listCertificatesSeen()).toEqual([next, { ...first, clientId: 'client-b' }]);
      // Noting is no change of access: the reader's answers are as before.
      expect((await reader.findClient('client-a'))?.id).toBe('client-a');
      await admin.removeClient('client-a');
      expect((await admin.listCertificatesSeen()).map((s) => s.clientId)).toEqual(['client-b']);
    });

    describe('renewal claims (each presented certificate renews once)', () => {
      const claim = (serialNumber: string, clientId = 'client-a') => ({
        serialNumber,
        clientId,
        at: new Date('2026-12-01T09:00:00.000Z'),
      });

      it('a claim is true once, then false, through any connection', async () => {
        expect(await reader.claimRenewal(claim('4F1A09'))).toBe(true);
        expect(await reader.claimRenewal(claim('4F1A09'))).toBe(false);
        expect(await admin.claimRenewal(claim('4F1A09'))).toBe(false);
        // By another client too: the serial is claimed, whoever presents it.
        expect(await reader.claimRenewal(claim('4F1A09', 'client-b'))).toBe(false);
      });

      it('of ten concurrent claims of one serial, across connections, exactly one is true', async () => {
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? reader : admin).claimRenewal(claim('ABC123'))),
        );
        expect(results.filter((claimed) => claimed)).toHaveLength(1);
        expect(await reader.claimRenewal(claim('ABC123'))).toBe(false);
      });

      it('a released claim (issuing failed) can be claimed again, once', async () => {
        expect(await reader.claimRenewal(claim('1F'))).toBe(true);
        await reader.completeRenewal('1F', null);
        expect(await reader.claimRenewal(claim('1F'))).toBe(true);
        expect(await admin.claimRenewal(claim('1F'))).toBe(false);
        // Releasing what was never claimed, or completing it, changes nothing.
        await reader.completeRenewal('EE', null);
        await reader.completeRenewal('EF', '99');
        expect(await reader.claimRenewal(claim('EE'))).toBe(true);
        expect(await reader.claimRenewal(claim('EF'))).toBe(true);
      });

      it('a completed claim stays claimed: a later release does not free it, nor does a restart', async () => {
        expect(await reader.claimRenewal(claim('2E'))).toBe(true);
        await reader.completeRenewal('2E', '3D');
        expect(await reader.claimRenewal(claim('2E'))).toBe(false);
        await reader.completeRenewal('2E', null);
        expect(await reader.claimRenewal(claim('2E'))).toBe(false);
        expect(await admin.claimRenewal(claim('2E'))).toBe(false);
        // A claim still issuing holds across a restart too.
        expect(await reader.claimRenewal(claim('5C'))).toBe(true);
        if (store.reopen) {
          const restarted = await store.reopen();
          expect(await restarted.claimRenewal(claim('2E'))).toBe(false);
          expect(await restarted.claimRenewal(claim('5C'))).toBe(false);
          await restarted.completeRenewal('5C', '6B');
          expect(await restarted.claimRenewal(claim('5C'))).toBe(false);
        }
      });

      it('a removed client takes no claim with it', async () => {
        await admin.saveClient(AccessMother.client('client-a'));
        expect(await reader.claimRenewal(claim('7A'))).toBe(true);
        await admin.removeClient('client-a');
        await admin.saveClient(AccessMother.client('client-a'));
        expect(await reader.claimRenewal(claim('7A'))).toBe(false);
      });

      it('claims of different serials are independent', async () => {
        expect(await reader.claimRenewal(claim('A1'))).toBe(true);
        expect(await reader.claimRenewal(claim('A2'))).toBe(true);
        await reader.completeRenewal('A1', 'B1');
        await reader.completeRenewal('A2', null);
        expect(await reader.claimRenewal(claim('A1'))).toBe(false);
        expect(await reader.claimRenewal(claim('A2'))).toBe(true);
        expect(await reader.claimRenewal(claim('A3', 'client-b'))).toBe(true);
      });
    });

    it('does not let a caller change what the next read returns', async () => {
      await admin.saveClient(AccessMother.client('client-a'));
      const found = await reader.findClient('client-a');
      expect(found).toBeDefined();
      try {
        (found!.permissions as string[]).push('issueQueueToken');
      } catch {
        // a frozen answer refuses the change; that also keeps the contract
      }
      expect((await reader.findClient('client-a'))?.permissions).not.toContain('issueQueueToken');
    });

    describeClientChanges(() => ({ store, admin, reader }));
  });
}
