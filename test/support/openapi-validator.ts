import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; its default export arrives as the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type OpenApiDocument = {
  openapi: string;
  info: { version: string; title: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, OperationObject>>;
  components: {
    schemas: Record<string, SchemaObject>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
  security?: unknown;
};
export type OperationObject = {
  operationId: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: SchemaObject }[];
  responses: Record<string, { content?: Record<string, { schema: SchemaObject }> }>;
};
export type SchemaObject = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, SchemaObject>;
  required?: string[];
  anyOf?: SchemaObject[];
  items?: SchemaObject;
  $ref?: string;
  format?: string;
  pattern?: string;
};

const DOC_ID = 'urn:case-read:served-openapi';
const escapePointer = (segment: string) =>
  encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'));

/**
 * Validates bodies against the OpenAPI document the service serves (JSON Schema 2020-12,
 * as OpenAPI 3.1 says), never against the zod schemas that produced it.
 */
export class OpenApiValidator {
  private readonly ajv: Ajv2020;

  constructor(document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(this.ajv);
    // Document-level OpenAPI keys and the `example` annotation are not JSON Schema keywords.
    for (const keyword of [...Object.keys(document), 'example']) this.ajv.addKeyword(keyword);
    this.ajv.addSchema({ ...document, $id: DOC_ID });
  }

  /** Errors for `body` against the response schema of an operation and status, or [] when valid. */
  responseErrors(path: string, method: string, status: number, contentType: string, body: unknown): string[] {
    const pointer = ['paths', path, method, 'responses', String(status), 'content', contentType, 'schema']
      .map(escapePointer)
      .join('/');
    const validate = this.ajv.getSchema(`${DOC_ID}#/${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  }
}
