import { describe, expect, it } from 'vitest';
import { CASE_OPERATIONS } from '../../../src/domain/case-operations.js';
import { CrnFormat } from '../../../src/domain/crn.js';
import {
  type FieldType,
  SPEC_ENDPOINTS,
  SPEC_EST_ENDPOINTS,
  SPEC_RESOURCES,
  SPEC_RISK_ENDPOINT,
  SPEC_SAR_ENDPOINTS,
  SPEC_TOKEN_ENDPOINT,
} from '../../spec/spec-tables.js';
import { fixtureApp, servedDocument } from '../../support/http.js';
import type { OpenApiDocument, SchemaObject } from '../../support/openapi-validator.js';

const app = fixtureApp();
const documentPromise = servedDocument(app);

/** Splits `anyOf: [X, {type: 'null'}]` or `type: [T, 'null']` into X and nullable. */
function unwrapNullable(schema: SchemaObject): { schema: SchemaObject; nullable: boolean } {
  if (Array.isArray(schema.anyOf)) {
    const nonNull = schema.anyOf.filter((s) => s.type !== 'null');
    if (nonNull.length === 1 && schema.anyOf.length === 2)
      return { schema: nonNull[0] as SchemaObject, nullable: true };
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const rest = schema.type.filter((t) => t !== 'null');
    return { schema: { ...schema, type: rest.length === 1 ? (rest[0] as string) : rest }, nullable: true };
  }
  return { schema, nullable: false };
}

function describeType(schema: SchemaObject): FieldType | string {
  if (schema.$ref) return { ref: schema.$ref.replace('#/components/schemas/', '') };
  if (schema.type === 'array' && schema.items?.$ref)
    return { arrayOf: schema.items.$ref.replace('#/components/schemas/', '') };
  if (schema.type === 'string' && schema.format === 'date-time') return 'date-time';
  if (schema.type === 'string' && schema.format === undefined) return 'string';
  if (schema.type === 'boolean') return 'boolean';
  return JSON.stringify(schema);
}

describe('the served OpenAPI document against the specification tables', () => {
  it.each(Object.entries(SPEC_RESOURCES))('%s has exactly the specified fields', async (name, fields) => {
    const document = await documentPromise;
    const schema = document.components.schemas[name];
    expect(schema, `components.schemas.${name}`).toBeDefined();
    expect(schema?.type).toBe('object');
    expect(Object.keys(schema?.properties ?? {}).sort()).toEqual(fields.map((f) => f.name).sort());
    // Every field is always sent (null where the tables allow null), so every field is
    // required in the document: a stricter promise than the tables, which let a sender
    // leave the not-required ones out. A field the tables leave optional must be nullable,
    // or the service would have nothing to send when it is unknown.
    expect([...(schema?.required ?? [])].sort()).toEqual(fields.map((f) => f.name).sort());
    for (const field of fields.filter((f) => !f.required)) {
      expect(field.nullable, `${name}.${field.name}: optional in the tables, so nullable`).toBe(true);
    }
    for (const field of fields) {
      const property = schema?.properties?.[field.name] as SchemaObject;
      const { schema: inner, nullable } = unwrapNullable(property);
      expect(nullable, `${name}.${field.name} nullable`).toBe(field.nullable);
      expect(describeType(inner), `${name}.${field.name} type`).toEqual(field.type);
    }
  });

  it.each(SPEC_ENDPOINTS)('$operationId is $method $path, answering $response', async (endpoint) => {
    const document = await documentPromise;
    const operation = document.paths[endpoint.path]?.[endpoint.method];
    expect(operation?.operationId).toBe(endpoint.operationId);
    expect(operation?.responses['200']?.content?.['application/json']?.schema.$ref).toBe(
      `#/components/schemas/${endpoint.response}`,
    );
    expect(operation?.parameters).toEqual([
      expect.objectContaining({
        name: 'crn',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ type: 'string' }),
      }),
    ]);
  });

  it('documents no other operation', async () => {
    const document = await documentPromise;
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method} ${path} ${op.operationId}`),
    );
    const specified = [
      ...SPEC_ENDPOINTS,
      SPEC_TOKEN_ENDPOINT,
      SPEC_RISK_ENDPOINT,
      ...SPEC_EST_ENDPOINTS,
      ...SPEC_SAR_ENDPOINTS,
    ].map((e) => `${e.method} ${e.path} ${e.operationId}`);
    expect(operations.sort()).toEqual(specified.sort());
  });

  it('the EST operations: mutual TLS and API key, a base64 PKCS#10 body, a base64 certs-only PKCS#7 answer', async () => {
    const document = await documentPromise;
    const renew = document.paths['/.well-known/est/simplereenroll']?.post as Record<string, unknown> & {
      requestBody?: { content: Record<string, unknown> };
      responses: Record<string, { content?: Record<string, unknown> }>;
    };
    expect(renew.security).toEqual([{ mutualTLS: [], apiKey: [] }]);
    expect(Object.keys(renew.requestBody?.content ?? {})).toEqual(['application/pkcs10']);
    expect(Object.keys(renew.responses['200']?.content ?? {})).toEqual([
      'application/pkcs7-mime; smime-type=certs-only',
    ]);
    expect(Object.keys(renew.responses).sort()).toEqual(
      ['200', '400', '403', '409', '413', '415', '429', '500', '501', '502', '503', '504'].sort(),
    );
    const cacerts = document.paths['/.well-known/est/cacerts']?.get as {
      responses: Record<string, { content?: Record<string, unknown> }>;
    };
    expect(Object.keys(cacerts.responses['200']?.content ?? {})).toEqual([
      'application/pkcs7-mime; smime-type=certs-only',
    ]);
  });

  it('GET /v1/persons/{crn}/risks/scores documents the gateway payload, paged', async () => {
    const document = await documentPromise;
    const operation = document.paths[SPEC_RISK_ENDPOINT.path]?.get;
    expect(operation?.operationId).toBe(SPEC_RISK_ENDPOINT.operationId);
    expect(operation?.security).toEqual([{ mutualTLS: [], apiKey: [] }]);
    expect(operation?.parameters?.map((p) => `${p.in}:${p.name}`).sort()).toEqual([
      'path:crn',
      'query:page',
      'query:perPage',
    ]);
    // Typed as what they are, so a generated client takes numbers (the server still reads
    // digits only: `1e1` or `+1` is a 400).
    const query = Object.fromEntries(
      (operation?.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p.schema]),
    );
    expect(query).toEqual({
      page: { type: 'integer', minimum: 1, default: 1, example: 1 },
      perPage: { type: 'integer', minimum: 1, maximum: 100, default: 10, example: 10 },
    });
    const schemas = document.components.schemas;
    expect(Object.keys(schemas.RiskPredictorScore?.properties ?? {}).sort()).toEqual(
      [...SPEC_RISK_ENDPOINT.predictorFields].sort(),
    );
    expect(Object.keys(schemas.Pagination?.properties ?? {}).sort()).toEqual(
      [...SPEC_RISK_ENDPOINT.paginationFields].sort(),
    );
    expect(JSON.stringify(schemas.ScoreLevel)).toContain(
      JSON.stringify([...SPEC_RISK_ENDPOINT.levels]).slice(1, -1),
    );
  });

  it('POST /token answers the STS Credentials fields and needs only the certificate and API key', async () => {
    const document = await documentPromise;
    const operation = document.paths[SPEC_TOKEN_ENDPOINT.path]?.[SPEC_TOKEN_ENDPOINT.method];
    expect(operation?.operationId).toBe(SPEC_TOKEN_ENDPOINT.operationId);
    expect(operation?.security).toEqual([{ mutualTLS: [], apiKey: [] }]);
    expect(operation?.parameters ?? []).toEqual([]);
    expect(operation?.responses['200']?.content?.['application/json']?.schema.$ref).toBe(
      '#/components/schemas/QueueCredentials',
    );
    const schema = document.components.schemas.QueueCredentials;
    expect(Object.keys(schema?.properties ?? {}).sort()).toEqual([...SPEC_TOKEN_ENDPOINT.fields].sort());
    expect([...(schema?.required ?? [])].sort()).toEqual([...SPEC_TOKEN_ENDPOINT.fields].sort());
    expect(schema?.properties?.Expiration?.format).toBe('date-time');
    for (const status of ['403', '502', '504']) {
      expect(operation?.responses[status]?.content?.['application/problem+json']?.schema.$ref).toBe(
        '#/components/schemas/Problem',
      );
    }
  });
});

describe('the served OpenAPI document against the case operations table', () => {
  it.each(CASE_OPERATIONS)(
    '$id is GET $path, asking for the bearer JWT exactly when its row does',
    async (row) => {
      const operation = (await documentPromise).paths[row.path]?.get;
      expect(operation?.operationId).toBe(row.id);
      expect(operation?.parameters).toContainEqual(
        expect.objectContaining({ name: 'crn', in: 'path', required: true }),
      );
      const schemes = (operation?.security ?? []).flatMap((requirement) => Object.keys(requirement));
      expect(schemes.includes('bearerAuth'), `${row.id} bearerAuth`).toBe(row.bearer);
      expect(operation?.security).toEqual([
        row.bearer ? { mutualTLS: [], apiKey: [], bearerAuth: [] } : { mutualTLS: [], apiKey: [] },
      ]);
    },
  );

  it('no operation takes a crn in its path but the rows; any other taking a crn is a subject access one', async () => {
    const document = await documentPromise;
    const takingCrn = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        (op.parameters ?? [])
          .filter((parameter) => parameter.name === 'crn')
          .map((parameter) => ({ in: parameter.in, operation: `${method} ${path} ${op.operationId}` })),
      ),
    );
    expect(
      takingCrn
        .filter((taking) => taking.in === 'path')
        .map((taking) => taking.operation)
        .sort(),
    ).toEqual(CASE_OPERATIONS.map((row) => `get ${row.path} ${row.id}`).sort());
    const subjectAccess = SPEC_SAR_ENDPOINTS.map((e) => `${e.method} ${e.path} ${e.operationId}`);
    for (const taking of takingCrn.filter((t) => t.in !== 'path')) {
      expect(subjectAccess).toContain(taking.operation);
    }
  });
});

describe('document metadata and security', () => {
  it('is OpenAPI 3.1 at version 1.0', async () => {
    const document = await documentPromise;
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.version).toBe('1.0');
  });

  // What npm run lint:openapi (Spectral's operation-tag-defined and operation-description,
  // Redocly's tag-description and operation-summary) asks of the document, here too, so a
  // new operation missing one fails the tests and says which.
  it('declares every tag an operation uses, each described, and no tag no operation uses', async () => {
    const document = await documentPromise;
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    const used = new Set(operations.flatMap((op) => op.tags ?? []));
    const declared = document.tags ?? [];
    expect(declared.map((t) => t.name).sort()).toEqual([...used].sort());
    for (const tag of declared) expect(tag.description, `tag ${tag.name}`).toMatch(/\S/);
  });

  it('gives every operation a tag, a summary and a description', async () => {
    const document = await documentPromise;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const where = `${method} ${path}`;
        expect(op.tags?.length, `${where} tags`).toBeGreaterThan(0);
        expect(op.summary, `${where} summary`).toMatch(/\S/);
        expect(op.description, `${where} description`).toMatch(/\S/);
      }
    }
  });

  // A consumer reading the reference page sees what each parameter is for (Spectral's full
  // ruleset asks it; the risk scores' page and perPage had none).
  it('describes every parameter of every operation', async () => {
    const document = await documentPromise;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const parameter of op.parameters ?? []) {
          expect(parameter.description, `${method} ${path} ${parameter.name}`).toMatch(/\S/);
        }
      }
    }
  });

  it('declares the bearer JWT, x-api-key and mutual TLS schemes', async () => {
    const { securitySchemes } = (await documentPromise).components;
    expect(securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(securitySchemes.mutualTLS).toMatchObject({ type: 'mutualTLS' });
  });

  it.each(SPEC_ENDPOINTS)(
    '$operationId requires the bearer token, API key and certificate together',
    async ({ path }) => {
      const operation = (await documentPromise).paths[path]?.get;
      expect(operation?.security).toEqual([{ mutualTLS: [], apiKey: [], bearerAuth: [] }]);
    },
  );

  it('documents problem+json for the error statuses of each operation', async () => {
    const document: OpenApiDocument = await documentPromise;
    for (const { path } of SPEC_ENDPOINTS) {
      for (const status of ['400', '401', '403', '404', '429', '500', '502', '503', '504']) {
        const content = document.paths[path]?.get?.responses[status]?.content;
        expect(content?.['application/problem+json']?.schema.$ref, `${path} ${status}`).toBe(
          '#/components/schemas/Problem',
        );
      }
    }
  });

  it('carries the configured crn pattern', async () => {
    const document = await documentPromise;
    expect(document.paths['/case/{crn}']?.get?.parameters?.[0]?.schema.pattern).toBe('^[A-Z][0-9]{6}$');
    const custom = fixtureApp({ crnFormat: CrnFormat.of('^[A-Z]{2}[0-9]{4}$') });
    const customDoc = await servedDocument(custom);
    expect(customDoc.paths['/case/{crn}']?.get?.parameters?.[0]?.schema.pattern).toBe('^[A-Z]{2}[0-9]{4}$');
    expect((await custom.request('/case/X123456')).status).toBe(400);
    expect((await custom.request('/case/AB1234')).status).toBe(404);
  });
});
