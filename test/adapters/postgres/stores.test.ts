import { afterAll, describe, expect, it } from 'vitest';
import type { PostgresAccessDirectory } from '../../../src/adapters/postgres/access-directory.js';
import { ACCESS_STORE } from '../../../src/adapters/postgres/access-schema.js';
import { CASE_STORE } from '../../../src/adapters/postgres/case-store.js';
import {
  createPool,
  migrate,
  type PostgresStoreDescription,
  requireCurrent,
} from '../../../src/adapters/postgres/database.js';
import { postgresStores } from '../../../src/adapters/postgres/store-kind.js';
import { displayPostgresUrl, postgresUrlProblem, targetOf } from '../../../src/adapters/postgres/url.js';
import { Crn } from '../../../src/domain/crn.js';
import { StoreUnavailableError } from '../../../src/domain/errors.js';
import { StoreError } from '../../../src/ports/stores.js';
import { grownAndReferenceRoots } from '../../support/merkle-reference.js';
import { AccessMother } from '../../support/mothers.js';
import { adminQuery, testSchema } from '../../support/postgres.js';
import { testContext } from '../../support/stores.js';

const schema = testSchema('stores');

/** A store as an earlier release described it: its first `n` migrations, usable only at that version. */
const asOf = (store: PostgresStoreDescription, n: number): PostgresStoreDescription => ({
  ...store,
  migrations: store.migrations.slice(0, n),
  usableFrom: n,
});
afterAll(() => schema.drop());

describe('PostgreSQL store URLs', () => {
  it.each([
    ['postgres://u@h:5432/db', undefined],
    ['postgresql://u:secret@h/db?schema=case_read', undefined],
    ['postgres://u@h:5432/', /needs a database/],
    ['postgres://u@h/db?sslmode=disable', undefined],
    ['postgres://u@h/db?sslmode=require', undefined],
    ['postgres://u@h/db?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c.pem&sslkey=/k.pem', undefined],
    ['postgres://u@h/db?sslmode=verify-full&sslrootcert=system', undefined],
    [
      'postgres://u@h/db?sslmode=prefer',
      /sslmode must be disable, require, verify-ca or verify-full, not prefer/,
    ],
    ['postgres://u@h/db?sslmode=allow', /not allow \(prefer and allow fall back to plaintext/],
    ['postgres://u@h/db?sslmode=no-verify', /not no-verify .*no-verify verifies nothing/],
    ['postgres://u@h/db?sslmode=verify-full', /sslmode=verify-full needs sslrootcert=FILE/],
    ['postgres://u@h/db?sslmode=verify-ca', /sslmode=verify-ca needs sslrootcert=FILE/],
    [
      'postgres://u@h/db?sslmode=verify-ca&sslrootcert=system',
      /sslrootcert=system needs sslmode=verify-full/,
    ],
    ['postgres://u@h/db?sslrootcert=/ca.pem', /sslrootcert needs sslmode=require, verify-ca or verify-full/],
    ['postgres://u@h/db?sslmode=disable&sslkey=/k.pem&sslcert=/c.pem', /sslcert needs sslmode=/],
    ['postgres://u@h/db?sslmode=require&sslcert=/c.pem', /sslcert and sslkey go together/],
    ['postgres://u@h/db?sslmode=require&sslrootcert=', /sslrootcert needs a file path/],
    ['postgres://u@h/db?sslmode=disable&sslmode=verify-full', /takes \?sslmode= once/],
    [
      'postgres://u@h/db?ssl=true',
      /takes only \?schema=, sslmode=, sslrootcert=, sslcert= and sslkey=, not \?ssl$/,
    ],
    ['postgres://u@h/db?schema=Bad-Name', /schema must be/],
    ['postgres://u@h/db?schema=x;drop', /schema must be/],
  ])('%s', (url, problem) => {
    const found = postgresUrlProblem(url);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });

  it('masks the password wherever the URL is shown, and drops the schema from the connection string', () => {
    const url = 'postgres://svc:hunter2@db.internal:5432/cases?schema=case_read';
    expect(displayPostgresUrl(url)).toBe('postgres://svc:********@db.internal:5432/cases?schema=case_read');
    expect(targetOf(url)).toEqual({
      connectionString: 'postgres://svc:hunter2@db.internal:5432/cases',
      schema: 'case_read',
      tls: { assurance: 'none' },
    });
    expect(targetOf('postgres://u@h/db').schema).toBe('public');
  });

  it("reads libpq's TLS parameters with libpq's meanings, and keeps them out of the driver's URL", () => {
    const target = targetOf(
      'postgres://u@db.internal/cases?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c.pem&sslkey=/k.pem&schema=s',
    );
    expect(target).toEqual({
      connectionString: 'postgres://u@db.internal/cases',
      schema: 's',
      tls: { assurance: 'verify-full', rootCert: '/ca.pem', cert: '/c.pem', key: '/k.pem' },
    });
    expect(targetOf('postgres://u@h/db?sslmode=disable').tls).toEqual({ assurance: 'none' });
    expect(targetOf('postgres://u@h/db?sslmode=require').tls).toEqual({ assurance: 'encrypted' });
    // libpq: `require` with a root certificate verifies the chain, as `verify-ca` does.
    expect(targetOf('postgres://u@h/db?sslmode=require&sslrootcert=/ca.pem').tls).toEqual({
      assurance: 'verify-ca',
      rootCert: '/ca.pem',
    });
    expect(targetOf('postgres://u@h/db?sslmode=verify-ca&sslrootcert=/ca.pem').tls.assurance).toBe(
      'verify-ca',
    );
  });
});

describe('PostgreSQL schemas and migrations', () => {
  it('serve refuses a store that does not exist, naming the command that creates it', async () => {
    const missing = testSchema('missing');
    await expect(postgresStores.cases?.open(missing.url, testContext)).rejects.toThrow(
      /case store does not exist in schema t_missing_\w+; create it with: case-read cases import/,
    );
    await expect(postgresStores.access?.open(missing.url, testContext)).rejects.toThrow(
      /access store does not exist .*case-read clients add/,
    );
    await missing.drop();
  });

  it('serve refuses an older schema with the command that migrates it; the writer migrates it', async () => {
    const pool = createPool(targetOf(schema.url), { application: 'case-read test' });
    try {
      await migrate(pool, schema.name, CASE_STORE);
      // This release's version, computed (a migration added is not a test to edit).
      const current = CASE_STORE.migrations.length;
      // The next release adds a column that readers must not ignore: only it can use the store.
      const newer = {
        ...CASE_STORE,
        migrations: [...CASE_STORE.migrations, 'ALTER TABLE cases ADD COLUMN extra TEXT'],
        usableFrom: current + 1,
      };
      const refused = await requireCurrent(pool, schema.name, newer).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(StoreError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          `case store in schema t_stores_\\w+ is at schema version ${current}, this release needs ${current + 1}; migrate it with: case-read stores migrate$`,
        ),
      );
      await expect(migrate(pool, schema.name, newer)).resolves.toEqual({
        before: current,
        after: current + 1,
      });
      await expect(migrate(pool, schema.name, newer)).resolves.toEqual({
        before: current + 1,
        after: current + 1,
      });
      await expect(requireCurrent(pool, schema.name, newer)).resolves.toBeUndefined();
      // A store written by a newer release that does not say this one can use it is refused, not downgraded.
      await expect(requireCurrent(pool, schema.name, CASE_STORE)).rejects.toThrow(
        new RegExp(
          `at schema version ${current + 1}, written by a newer release than this one \\(${current}\\), and it is usable from version ${current + 1}`,
        ),
      );
      await expect(migrate(pool, schema.name, CASE_STORE)).rejects.toThrow(/written by a newer release/);
    } finally {
      await pool.end();
    }
  });

  it('a store a newer release migrated and says this one can use is used as it is, and left at its version', async () => {
    const ahead = testSchema('ahead');
    const pool = createPool(targetOf(ahead.url), { application: 'case-read test' });
    try {
      const next = {
        ...CASE_STORE,
        migrations: [...CASE_STORE.migrations, 'CREATE TABLE next_release_notes (id TEXT PRIMARY KEY)'],
        usableFrom: CASE_STORE.migrations.length,
      };
      await migrate(pool, ahead.name, next);
      await expect(requireCurrent(pool, ahead.name, CASE_STORE)).resolves.toBeUndefined();
      const newer = next.migrations.length;
      await expect(migrate(pool, ahead.name, CASE_STORE)).resolves.toEqual({ before: newer, after: newer });
      expect((await ahead.query('SELECT store, version, usable_from FROM case_read_schema')).rows).toEqual([
        { store: 'case store', version: newer, usable_from: CASE_STORE.migrations.length },
      ]);
      // A record written by the previous release, which kept no usable_from: only the exact version is used.
      await ahead.query('UPDATE case_read_schema SET usable_from = NULL');
      await expect(requireCurrent(pool, ahead.name, CASE_STORE)).rejects.toThrow(
        /it does not say which older releases can use it/,
      );
    } finally {
      await pool.end();
      await ahead.drop();
    }
  });

  it('an access store at version 1 (before data minimisation) is refused by serve and migrated by the operator, keeping its clients', async () => {
    const old = testSchema('access_v1');
    const pool = createPool(targetOf(old.url), { application: 'case-read test' });
    try {
      const v1 = asOf(ACCESS_STORE, 1);
      await migrate(pool, old.name, v1);
      await adminQuery(
        "INSERT INTO clients (id, permissions, suspended) VALUES ('client-a', '{getCase,getRiskScores}', false)",
        [],
        old.name,
      );
      await expect(postgresStores.access?.open(old.url, testContext)).rejects.toThrow(
        new RegExp(
          `access store in schema \\w+ is at schema version 1, this release needs ${ACCESS_STORE.migrations.length}; migrate it with: case-read stores migrate`,
        ),
      );
      const admin = await postgresStores.access?.openAdmin?.(old.url, testContext);
      await admin?.close();
      const reader = await postgresStores.access?.open(old.url, testContext);
      try {
        const client = await reader?.value.findClient('client-a');
        expect(client?.permissions).toEqual(['getCase', 'getRiskScores']);
        expect(client?.redact).toEqual([]);
        expect(client?.limitedAccess).toBe('deny');
      } finally {
        await reader?.close();
      }
    } finally {
      await pool.end();
      await old.drop();
    }
  });

  it('two writers migrating at once both succeed and leave one store at the current version', async () => {
    const both = testSchema('race');
    const pools = [0, 1].map(() => createPool(targetOf(both.url), { application: 'case-read test' }));
    try {
      await Promise.all(pools.map((pool) => migrate(pool, both.name, ACCESS_STORE)));
      const { rows } = await adminQuery('SELECT store, version FROM case_read_schema', [], both.name);
      expect(rows).toEqual([{ store: 'access store', version: ACCESS_STORE.migrations.length }]);
      const recorded = await adminQuery('SELECT usable_from FROM case_read_schema', [], both.name);
      expect(recorded.rows).toEqual([{ usable_from: ACCESS_STORE.usableFrom }]);
    } finally {
      for (const pool of pools) await pool.end();
      await both.drop();
    }
  });
});

describe('PostgreSQL on the request path', () => {
  it('holds nothing for admission while the access change listener is lost: each request reads the store', async () => {
    const own = testSchema('unheard');
    const admin = await postgresStores.access?.openAdmin?.(own.url, testContext);
    const opened = await postgresStores.access?.open(own.url, testContext);
    if (!admin || !opened) throw new Error('no access store');
    const reader = opened.value;
    const held = () => reader.heldAdmission?.('key0000000000001', 'client-a', 'CAFE');
    const read = async () => {
      await reader.findApiKey('key0000000000001');
      await reader.findClient('client-a');
      await reader.isCertificateRevoked('CAFE', 'client-a');
    };
    try {
      await admin.value.saveClient(AccessMother.client('client-a'));
      await admin.value.addApiKey(AccessMother.key('key0000000000001', 'client-a'));
      await (reader as PostgresAccessDirectory).sync();
      await read();
      expect(held()?.client.suspended).toBe(false);
      await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        `case-read access listener ${own.name}`,
      ]);
      // The listener's end arrives as an event; until then its notifications were still heard.
      for (let i = 0; i < 500 && held() !== undefined; i++) await new Promise((r) => setTimeout(r, 10));
      expect(held()).toBeUndefined();
      // A change it cannot hear about is read by the next request, and nothing is held meanwhile.
      await admin.value.setSuspended('client-a', true);
      await read();
      expect(held()).toBeUndefined();
      expect((await reader.findClient('client-a'))?.suspended).toBe(true);
    } finally {
      await opened.close();
      await admin.close();
      await own.drop();
    }
  });

  it('a failing read is a StoreUnavailableError (503) naming no SQL; killed connections are replaced', async () => {
    const own = testSchema('killed');
    const writer = await postgresStores.cases?.openWriter?.(own.url, testContext);
    await writer?.close();
    const opened = await postgresStores.cases?.open(own.url, testContext);
    if (!opened) throw new Error('no case store');
    try {
      expect(await opened.value.findHomeOfficeInterest(Crn.parse('X123456'))).toBeUndefined();
      // Terminate every backend of this store's pool, idle or not.
      await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        `case-read case store ${own.name}`,
      ]);
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, () => opened.value.findHomeOfficeInterest(Crn.parse('X123456'))),
      );
      for (const r of results) {
        if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(StoreUnavailableError);
      }
      expect(await opened.value.findHomeOfficeInterest(Crn.parse('X123456'))).toBeUndefined();
      await expect(opened.ping()).resolves.toBeUndefined();
      // The engine fails the statement itself: the error is the domain's, with the SQLSTATE only.
      await adminQuery('ALTER TABLE cases RENAME TO cases_gone', [], own.name);
      const failed = await opened.value.findPersonalDetails(Crn.parse('X123456')).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect(failed).toMatchObject({ store: 'case store', logLabel: '42P01' });
      expect((failed as Error).message).not.toMatch(/cases|relation|SELECT/);
      await adminQuery('ALTER TABLE cases_gone RENAME TO cases', [], own.name);
      expect(await opened.value.findPersonalDetails(Crn.parse('X123456'))).toBeUndefined();
    } finally {
      await opened.close();
      await own.drop();
    }
  });

  it('an unreachable server is a StoreError at start-up, with no password in the message', async () => {
    const error = await postgresStores.cases
      ?.open('postgres://svc:hunter2@127.0.0.1:1/nowhere', testContext)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/case store cannot be reached/);
    expect((error as Error).message).not.toContain('hunter2');
  });
});

describe('PostgreSQL audit store versions 3 (checkpoints), 4 (issued), 5 (tree), 6 (archive boundary), 7 (witnesses) and 8 (continuations)', () => {
  it('the audit commands refuse a version-2 trail, naming serve; serve migrates it and the chain continues', async () => {
    const { AUDIT_STORE } = await import('../../../src/adapters/postgres/audit-log.js');
    const { checkpointAt, auditRecord } = await import('../../contract/audit-log.contract.js');
    const old = testSchema('audit_v2');
    const pool = createPool(targetOf(old.url), { application: 'case-read test' });
    try {
      await migrate(pool, old.name, asOf(AUDIT_STORE, 2));
      await expect(postgresStores.audit?.open(old.url, testContext, { create: false })).rejects.toThrow(
        new RegExp(
          `audit store in schema t_audit_v2_\\w+ is at schema version 2, this release needs ${AUDIT_STORE.migrations.length}; migrate it with: case-read stores migrate`,
        ),
      );
      const opened = await postgresStores.audit?.open(old.url, testContext, { create: true });
      if (!opened) throw new Error('postgres cannot hold the audit trail');
      try {
        await opened.value.append(auditRecord(1));
        const head = await opened.value.head();
        await opened.value.saveCheckpoint(checkpointAt(1, head.hash));
        expect(await opened.value.newestCheckpoint()).toEqual(checkpointAt(1, head.hash));
        expect(
          (await old.query("SELECT version FROM case_read_schema WHERE store = 'audit store'")).rows,
        ).toEqual([{ version: AUDIT_STORE.migrations.length }]);
      } finally {
        await opened.close();
      }
    } finally {
      await pool.end();
      await old.drop();
    }
  });

  it('reads continuation records through their own partial index (version 8)', async () => {
    const { CONTINUATIONS_SQL } = await import('../../../src/adapters/shared/audit-chain.js');
    const { auditRecord, continuationRecord } = await import('../../contract/audit-log.contract.js');
    const schema = testSchema('audit_continuations');
    try {
      const opened = await postgresStores.audit?.open(schema.url, testContext, { create: true });
      if (!opened) throw new Error('postgres cannot hold the audit trail');
      try {
        for (let i = 1; i <= 3; i++)
          await opened.value.append(i === 2 ? continuationRecord(2) : auditRecord(i));
        expect((await opened.value.continuations()).map((r) => r.seq)).toEqual([2]);
      } finally {
        await opened.close();
      }
      const index = await schema.query(
        "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'audit_continuations'",
      );
      expect(index.rows[0]?.indexdef).toMatch(
        /ON \S*audit USING btree \(seq\) WHERE \(continuation IS NOT NULL\)/,
      );
      // The planner may take it (a table this small it would rather scan).
      const [, explained] = (await schema.query(
        `SET enable_seqscan = off; EXPLAIN ${CONTINUATIONS_SQL}`,
      )) as unknown as [unknown, { rows: { 'QUERY PLAN': string }[] }];
      expect(explained.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(
        /Index Scan (using|on) audit_continuations/,
      );
    } finally {
      await schema.drop();
    }
  });

  it('migrates a version-3 trail of format-2 records to version 8: they keep verifying, the chain continues with issued', async () => {
    const { AUDIT_STORE } = await import('../../../src/adapters/postgres/audit-log.js');
    const { checkpointAt, auditRecord } = await import('../../contract/audit-log.contract.js');
    const { VERSION_TWO_COLUMNS, versionTwoChain, versionTwoRowValuesOf } = await import(
      '../../support/audit-trails.js'
    );
    const old = testSchema('audit_v3');
    const pool = createPool(targetOf(old.url), { application: 'case-read test' });
    try {
      await migrate(pool, old.name, asOf(AUDIT_STORE, 3));
      const { stored, head } = versionTwoChain([1, 2, 3].map((i) => auditRecord(i)));
      for (const r of stored) {
        await old.query(
          `INSERT INTO audit (${VERSION_TWO_COLUMNS.join(', ')}) VALUES (${VERSION_TWO_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
          versionTwoRowValuesOf(r),
        );
      }
      await old.query('UPDATE audit_head SET seq = $1, hash = $2', [head.seq, head.hash]);
      await expect(postgresStores.audit?.open(old.url, testContext, { create: false })).rejects.toThrow(
        new RegExp(
          `audit store in schema t_audit_v3_\\w+ is at schema version 3, this release needs ${AUDIT_STORE.migrations.length}; migrate it with: case-read stores migrate`,
        ),
      );
      const opened = await postgresStores.audit?.open(old.url, testContext, { create: true });
      if (!opened) throw new Error('postgres cannot hold the audit trail');
      try {
        expect(await opened.value.head()).toEqual(head);
        expect(await opened.value.verify()).toEqual({ ok: true, records: 3 });
        await opened.value.append(auditRecord(4, { operation: 'renewCertificate', issued: '7F3A9C00E1' }));
        expect((await opened.value.query({})).map((r) => [r.version, r.issued])).toEqual([
          [2, null],
          [2, null],
          [2, null],
          [4, '7F3A9C00E1'],
        ]);
        const newHead = await opened.value.head();
        await opened.value.saveCheckpoint(checkpointAt(4, newHead.hash));
        expect(await opened.value.verify()).toEqual({ ok: true, records: 4 });
        // The tree grows over the records written before format 4 and after: RFC 9162's root of their entries.
        const roots = await grownAndReferenceRoots(opened.value);
        expect(roots.grown).toBe(roots.reference);
        expect(
          (await old.query("SELECT version FROM case_read_schema WHERE store = 'audit store'")).rows,
        ).toEqual([{ version: AUDIT_STORE.migrations.length }]);
        // A format-2 record given an issued certificate afterwards breaks the chain.
        await old.query("UPDATE audit SET issued = '7F3A9C00E1' WHERE seq = 2");
        expect(await opened.value.verify()).toMatchObject({
          ok: false,
          brokenAt: 2,
          reason: 'a version-2 record carries version-3 fields: it was changed',
        });
      } finally {
        await opened.close();
      }
    } finally {
      await pool.end();
      await old.drop();
    }
  });
});
