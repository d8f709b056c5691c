import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTABLE_FIELDS, type RedactableField } from '../../../src/domain/access/redaction.js';
import { CASE_OPERATIONS, CASE_READS, casePath } from '../../../src/domain/case-operations.js';
import { openFixtureCases } from '../../support/fixtures.js';
import { fixtureApp, servedDocument } from '../../support/http.js';
import { httpsRequest } from '../../support/https-client.js';
import { AccessMother } from '../../support/mothers.js';
import { OpenApiValidator } from '../../support/openapi-validator.js';
import { type ClientCredentials, makeTestPki, type TestPki } from '../../support/pki.js';
import { mintTestToken, type RunningTestService, startTestService } from '../../support/service.js';
import { sqliteCaseStoreOf } from '../../support/sqlite.js';

// Data minimisation per client (decisions §8), through the real mutual-TLS listener, over a
// SQLite case store: the store that offers the stored-text fast path for getCase.
const cases = openFixtureCases();
const full = cases.find((c) => c.communityManager !== null && c.homeOfficeInterest.notes !== null)!;
const dir = mkdtempSync(join(tmpdir(), 'case-read-redact-'));
let pki: TestPki;
let service: RunningTestService;
let validator: OpenApiValidator;
const clients: Record<string, { cert: ClientCredentials; key: string }> = {};
const WITHHELD: Record<string, readonly RedactableField[]> = {
  plain: [],
  everything: REDACTABLE_FIELDS,
  'language-only': ['preferredLanguage'],
  'manager-email': ['communityManager.emailAddress', 'communityManager.name.middleName'],
};

beforeAll(async () => {
  pki = await makeTestPki();
  service = await startTestService(pki, {
    repository: sqliteCaseStoreOf(join(dir, 'cases.db'), cases),
  });
  for (const [cn, redact] of Object.entries(WITHHELD)) {
    await service.directory.saveClient(
      AccessMother.client(cn, {
        permissions: [...CASE_READS],
        redact,
      }),
    );
    clients[cn] = { cert: await pki.client(cn), key: (await service.issueKey(cn)).key };
  }
  validator = new OpenApiValidator(await servedDocument(fixtureApp()));
});
afterAll(async () => {
  await service.close();
  pki.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

async function read(cn: string, path: string): Promise<Record<string, unknown>> {
  const { cert, key } = clients[cn]!;
  const response = await httpsRequest(`${service.url}${path}`, {
    ca: pki.ca.certPem,
    cert: cert.certPem,
    key: cert.keyPem,
    headers: { 'x-api-key': key, authorization: `Bearer ${await mintTestToken(pki, cn)}` },
  });
  expect(response.status).toBe(200);
  return response.json() as Record<string, unknown>;
}

/**
 * The values at a dotted path: a list on the way is walked element by element
 * (`registrations.notes` is the notes of every registration).
 */
function valuesAt(at: unknown, parts: readonly string[]): unknown[] {
  if (Array.isArray(at)) return at.flatMap((element) => valuesAt(element, parts));
  if (parts.length === 0) return [at];
  return valuesAt((at as Record<string, unknown>)[parts[0]!], parts.slice(1));
}

/** Sets the field at a dotted path to null, in every element of a list on the way. */
function setNull(at: unknown, parts: readonly string[]): void {
  if (Array.isArray(at)) {
    for (const element of at) setNull(element, parts);
    return;
  }
  const record = at as Record<string, unknown>;
  if (parts.length === 1) record[parts[0]!] = null;
  else setNull(record[parts[0]!], parts.slice(1));
}

/** The answer with the listed fields set to null, by their dotted paths (the operation's prefix dropped). */
function withNulls(answer: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const copy = structuredClone(answer);
  for (const path of paths) setNull(copy, path.split('.'));
  return copy;
}

/**
 * The fields of the list an operation withholds (its row's `withholds`), as paths in its
 * answer: a field's dotted path, its first part dropped where the answer is that part itself
 * (the Home Office interest read answers the interest, so `homeOfficeInterest.notes` is its `notes`).
 */
function pathsIn(
  withholds: readonly string[],
  fields: readonly RedactableField[],
  answer: Record<string, unknown>,
): string[] {
  return fields
    .filter((field) => withholds.includes(field))
    .map((field) => {
      const [first, ...rest] = field.split('.');
      return rest.length === 0 || first! in answer ? field : rest.join('.');
    });
}

describe('data minimisation: a withheld field is null, every other field unchanged', () => {
  for (const row of CASE_OPERATIONS) {
    const documented = row.path;
    for (const cn of ['everything', 'language-only', 'manager-email']) {
      it(`${documented} for a client withholding ${WITHHELD[cn]!.length} field(s) (${cn})`, async () => {
        const path = casePath(row, full.crn);
        const plain = await read('plain', path);
        const minimised = await read(cn, path);
        const paths = pathsIn(row.withholds, WITHHELD[cn]!, plain);
        expect(minimised).toStrictEqual(withNulls(plain, paths));
        for (const p of paths) {
          // The fixture holds something there, so null is the withholding, not the data.
          const held = valuesAt(plain, p.split('.'));
          expect(held.length, p).toBeGreaterThan(0);
          expect(
            held.some((value) => value !== null && value !== undefined),
            p,
          ).toBe(true);
        }
        expect(validator.responseErrors(documented, 'get', 200, 'application/json', minimised)).toEqual([]);
      });
    }
  }

  it('the stored-text fast path is not taken past a withheld field: every fixture, every client', async () => {
    for (const record of cases) {
      const plain = await read('plain', `/case/${record.crn}`);
      expect(await read('everything', `/case/${record.crn}`)).toStrictEqual({
        preferredLanguage: null,
        personalCircumstances: null,
        disabilities: null,
        offenderPersonalityDisorder: null,
      });
      expect(await read('manager-email', `/case/${record.crn}`)).toStrictEqual(plain);
    }
  });

  it('risk scores have no field to withhold: answered in full', async () => {
    const path = `/v1/persons/${full.crn}/risks/scores`;
    expect(await read('everything', path)).toStrictEqual(await read('plain', path));
  });
});
