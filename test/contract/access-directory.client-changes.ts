import { describe, expect, it } from 'vitest';
import type { AccessDirectory } from '../../src/ports/access-directory.js';
import { AccessMother } from '../support/mothers.js';
import type { AccessStore, OpenedAccessStore } from './access-directory.contract.js';

/**
 * How long a change function holds the client while another operator tries to suspend it:
 * the suspend must still be waiting at the end (it waits for the update's commit). Where the
 * update did not hold the client, the suspend would end within milliseconds.
 */
const HELD_MS = 300;

/**
 * The access directory contract's part on adding and changing a client whole (`clients add`,
 * `clients update`): an add never replaces a client held, and an update is applied to the
 * client as held and written atomically, so no change made meanwhile (a suspension, another
 * update) is undone. `current` gives the store each test of the contract opened.
 */
export function describeClientChanges(
  current: () => { store: OpenedAccessStore; admin: AccessStore; reader: AccessDirectory },
): void {
  /** A second administration of the store, as another operator's; the one store where there is one alone. */
  const another = async () => {
    const { store, admin } = current();
    return store.another ? await store.another() : admin;
  };

  describe('clients added and updated whole, never over another change', () => {
    it('adds a client only when its id is free: one held is not replaced', async () => {
      const { admin, reader } = current();
      const first = AccessMother.client('client-a', { permissions: ['getCase'] });
      expect(await admin.addClient(first)).toBe(true);
      expect(await admin.addClient({ ...first, permissions: ['getRiskScores'], suspended: true })).toBe(
        false,
      );
      expect(await reader.findClient('client-a')).toStrictEqual(first);
      expect(await admin.listClients()).toStrictEqual([first]);
    });

    it('of two concurrent adds of one id, through two connections, exactly one is true and is held', async () => {
      const { admin } = current();
      const other = await another();
      const a = AccessMother.client('client-a', { permissions: ['getCase'] });
      const b = AccessMother.client('client-a', { permissions: ['getRiskScores'], rateLimit: '5/1s' });
      const added = await Promise.all([admin.addClient(a), other.addClient(b)]);
      expect(added.filter((one) => one)).toHaveLength(1);
      expect(await admin.listClients()).toStrictEqual([added[0] ? a : b]);
    });

    it('updates a client in place: the change is given the client held; its keys and suspension kept', async () => {
      const { admin, reader } = current();
      const before = AccessMother.client('client-a', { permissions: ['getCase'], rateLimit: '10/1s' });
      await admin.saveClient(before);
      await admin.addApiKey(AccessMother.key('key0000000000001', 'client-a'));
      await admin.setSuspended('client-a', true);
      // The reader holds the client as it was (where it caches): the update must reach it.
      expect(await reader.findClient('client-a')).toStrictEqual({ ...before, suspended: true });
      const given: unknown[] = [];
      const updated = await admin.updateClient('client-a', (held) => {
        given.push(held);
        return {
          ...held,
          permissions: ['getCase', 'getRiskScores'],
          rateLimit: null,
          redact: ['disabilities'],
        };
      });
      expect(given).toStrictEqual([{ ...before, suspended: true }]);
      const after = {
        ...before,
        suspended: true,
        permissions: ['getCase', 'getRiskScores'],
        rateLimit: null,
        redact: ['disabilities'],
      };
      expect(updated).toStrictEqual(after);
      expect(await reader.findClient('client-a')).toStrictEqual(after);
      expect(await admin.listClients()).toStrictEqual([after]);
      expect(await reader.findApiKey('key0000000000001')).toStrictEqual(
        AccessMother.key('key0000000000001', 'client-a'),
      );
    });

    it('an update of a client not held is undefined: the change is not called, nothing is added', async () => {
      const { admin } = current();
      let called = false;
      const updated = await admin.updateClient('nobody', (held) => {
        called = true;
        return held;
      });
      expect([updated, called]).toEqual([undefined, false]);
      expect(await admin.listClients()).toEqual([]);
    });

    it('a change that throws writes nothing, throws its error, and leaves the client free to change', async () => {
      const { admin, reader } = current();
      const client = AccessMother.client('client-a');
      await admin.saveClient(client);
      const refusal = new Error('refused');
      await expect(
        admin.updateClient('client-a', (held) => {
          // Even a change that would have been written whole is not, once it throws.
          if (held.id === 'client-a') throw refusal;
          return { ...held, suspended: true };
        }),
      ).rejects.toBe(refusal);
      expect(await reader.findClient('client-a')).toStrictEqual(client);
      // Nothing is left locked: another connection changes the client at once, and so does this one.
      expect(await (await another()).setSuspended('client-a', true)).toBe(true);
      expect(await admin.updateClient('client-a', (held) => ({ ...held, rateLimit: '1/1s' }))).toStrictEqual({
        ...client,
        suspended: true,
        rateLimit: '1/1s',
      });
    });

    it('changes started together all land: an update, a suspend and an update of another setting', async () => {
      const { admin } = current();
      const other = await another();
      await admin.saveClient(AccessMother.client('client-a', { permissions: ['getCase'] }));
      await Promise.all([
        admin.updateClient('client-a', (held) => ({ ...held, permissions: ['getCase', 'getRiskScores'] })),
        other.setSuspended('client-a', true),
        other.updateClient('client-a', (held) => ({ ...held, rateLimit: '5/1s' })),
      ]);
      expect(await admin.listClients()).toStrictEqual([
        AccessMother.client('client-a', {
          permissions: ['getCase', 'getRiskScores'],
          suspended: true,
          rateLimit: '5/1s',
        }),
      ]);
    });

    it('a suspend another operator makes while an update holds the client waits for it; neither undoes the other', async ({
      skip,
    }) => {
      // Optional: a store that lives in this thread alone has no other operator (reported skipped).
      const { store, admin } = current();
      if (store.otherOperator === undefined) return skip();
      await admin.saveClient(AccessMother.client('client-a', { permissions: ['getCase'] }));
      const other = await store.otherOperator();
      try {
        let endedWhileHeld: boolean | undefined;
        const updated = await admin.updateClient('client-a', (held) => {
          if (endedWhileHeld === undefined) {
            // The other operator's suspend starts now, after the update read the client and
            // before it writes; this thread waits for it (a while, without its event loop).
            other.suspend('client-a');
            endedWhileHeld = other.endedWithin(HELD_MS);
          }
          return { ...held, permissions: ['getCase', 'getRiskScores'] };
        });
        await other.done();
        // The suspend waited for the update's commit, then applied to what it wrote.
        expect(endedWhileHeld).toBe(false);
        expect(updated?.suspended).toBe(false);
        expect(await admin.listClients()).toStrictEqual([
          AccessMother.client('client-a', { permissions: ['getCase', 'getRiskScores'], suspended: true }),
        ]);
      } finally {
        await other.close();
      }
    });
  });
}
