import { createRoute, type RouteConfig, z } from '@hono/zod-openapi';
import { CRN_MAX_LENGTH, type CrnFormat } from '../../domain/crn.js';
import type { OperationGuard } from './cases.routes.js';
import { gatewayTimeout, problem, unavailable } from './route-responses.js';
import {
  CommunityManagerSchema,
  crnSchema,
  HomeOfficeInterestSchema,
  PersonalDetailsAndCircumstancesSchema,
  RiskPredictorScoreSchema,
} from './schemas.js';

/**
 * The estate's subject access request endpoints (decisions §22), as hmpps-kotlin-lib declares
 * them: `GET /subject-access-request` and its template, unversioned, behind the perimeter
 * (client certificate and API key), each operation its own permission. The SAR service's own
 * door (decisions §23, `sar-app.ts`) serves the same routes with its guard and its security.
 */

/** The main listener's security requirement of both routes: client certificate and API key. */
const MUTUAL_TLS_SECURITY: NonNullable<RouteConfig['security']> = [{ mutualTLS: [], apiKey: [] }];

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const dateParam = (name: string, description: string) =>
  z
    .string()
    .regex(DATE, { error: 'must be a date written YYYY-MM-DD' })
    .optional()
    .openapi({
      param: { name, in: 'query', required: false, description },
      type: 'string',
      format: 'date',
      example: name === 'fromDate' ? '2026-01-01' : '2026-11-28',
    });

/** The query: a crn of the configured pattern (read into a Crn here), a prn, and the window's days. */
function sarQuerySchema(format: CrnFormat) {
  return z.object({
    prn: z
      .string()
      .max(64)
      .optional()
      .openapi({
        param: {
          name: 'prn',
          in: 'query',
          required: false,
          description:
            'Prison reference number: this service holds probation data only, so a prn alone is answered 209',
        },
        example: 'A1234BC',
      }),
    crn: crnSchema(format)
      .optional()
      .openapi({
        param: {
          name: 'crn',
          in: 'query',
          required: false,
          description: 'Case reference number of the person the request is about',
        },
        type: 'string',
        minLength: 1,
        maxLength: CRN_MAX_LENGTH,
        pattern: format.pattern,
        example: 'X123456',
      }),
    fromDate: dateParam(
      'fromDate',
      'The first day of the window (Europe/London, inclusive); absent: from the start of the trail',
    ),
    toDate: dateParam('toDate', 'The last day of the window (Europe/London, inclusive); absent: today'),
  });
}

const DisclosureSchema = z
  .object({
    time: z.iso.datetime().openapi({ description: 'When it was answered (UTC)' }),
    requestId: z.string().openapi({ description: 'The request id the recipient was given' }),
    operation: z.string().openapi({ description: 'The operation, e.g. getCase', example: 'getCase' }),
    recipient: z.string().openapi({ description: 'The client service that received it' }),
    onBehalfOf: z.string().nullable().openapi({
      description: 'The verified e-mail of the member of staff it acted for; null: the client itself',
    }),
    status: z.number().int().openapi({ description: 'The HTTP status it was answered with' }),
    index: z
      .number()
      .int()
      .nonnegative()
      .openapi({ description: "The record's leaf index in the audit log's tree (its seq − 1)" }),
    entry: z
      .string()
      .openapi({ description: "Base64 of the audit record's exact bytes: the log's entry (its leaf)" }),
  })
  .openapi('Disclosure', { description: "One audit record naming the crn: who was given the person's data" });

const BatchProofSchema = z
  .object({
    checkpoint: z.string().openapi({
      description:
        "The signed checkpoint every disclosure is proved against: a C2SP tlog-checkpoint note, with the witnesses' cosignatures held for it",
    }),
    hashes: z.string().openapi({
      description:
        "Base64 of the tree's stored hashes (32 bytes each, end to end) that Go's sumdb/tlog ProveRecord reads to prove every disclosure's index in the checkpoint's tree, each once, in ascending stored-hash index: a HashReader over them proves each entry with ProveRecord and CheckRecord",
    }),
  })
  .openapi('DisclosureProof', {
    description: 'One proof of all the disclosures, the checkpoint and the tree hashes shared between them',
  });

const TrailGapSchema = z
  .object({
    from: z.iso.datetime().nullable().openapi({
      description:
        'When the last audit record kept before the loss was written (UTC); null when none was kept: the loss runs from the start of the trail',
    }),
    to: z.iso.datetime().openapi({
      description:
        'When the trail was continued after the loss (UTC): the lost records were written before it',
    }),
    recordsLost: z.number().int().positive().openapi({
      description:
        "How many audit records were lost: those the previous log's witnesses (or its archive) held, less those kept. Any of them may have named this crn",
    }),
    reason: z.string().openapi({
      description: 'Why, as the operator stated it when continuing the trail',
      example: 'restored from the 04:00 backup (INC-1234)',
    }),
  })
  .openapi('TrailGap', {
    description:
      "A stretch of time whose audit records were lost from the trail (a restore from backup): requests answered then may have disclosed the person's data and are not listed. Stated by a signed continuation record of the trail, which case-read audit verify checks; not covered by the proof, which proves the disclosures only",
  });

const HeldCaseSchema = z
  .object({
    personalDetails: PersonalDetailsAndCircumstancesSchema.nullable(),
    homeOfficeInterest: HomeOfficeInterestSchema.nullable(),
    communityManager: CommunityManagerSchema.nullable(),
    riskScores: z.array(RiskPredictorScoreSchema),
  })
  .openapi('HeldCase', { description: 'What the case store holds about the crn, as stored' });

export const SubjectAccessContentSchema = z
  .object({
    content: z.object({
      crn: z.string(),
      case: HeldCaseSchema.nullable().optional().openapi({
        description:
          'The case as held; null when the store keeps copies but none of this crn; absent when the service reads cases from the system of record and keeps none',
      }),
      gaps: z.array(TrailGapSchema).openapi({
        description:
          'The losses of the audit trail that meet the window, oldest first; empty when none: what the disclosures cannot list, because the records were lost',
      }),
      disclosures: z
        .array(DisclosureSchema)
        .openapi({ description: 'Oldest first, from the store and the archive' }),
      proof: BatchProofSchema.optional().openapi({
        description: 'The proof of every disclosure in the signed audit trail; absent when there are none',
      }),
    }),
  })
  .openapi('SubjectAccessContent');

export function subjectAccessRoutes(
  format: CrnFormat,
  guard: OperationGuard,
  { security = MUTUAL_TLS_SECURITY }: { readonly security?: NonNullable<RouteConfig['security']> } = {},
) {
  return {
    getSubjectAccessRequest: createRoute({
      method: 'get',
      path: '/subject-access-request',
      operationId: 'getSubjectAccessRequest',
      middleware: guard('getSubjectAccessRequest'),
      tags: ['Subject access'],
      summary: 'What is held about a person, and who was given it',
      description:
        "The estate's subject access request: the case as the store holds it (where it keeps copies) and every audit record naming the crn in the window, from the store and the archive, each with its exact bytes and an inclusion proof against a signed checkpoint, and any loss of audit records in the window (gaps). Complete or nothing: a trail that cannot be read whole answers 503. The answer is streamed.",
      security,
      request: { query: sarQuerySchema(format) },
      responses: {
        200: {
          description: 'What is held about the crn in the window',
          content: { 'application/json': { schema: SubjectAccessContentSchema } },
        },
        204: {
          description:
            'Nothing is held about the crn in the window, and the audit trail lost no records in it (a loss is answered 200, with its gaps)',
        },
        209: { description: 'Only a prn was given: this service holds no data by prn' },
        400: problem(
          'No crn or prn, a crn not of the configured pattern, a date not YYYY-MM-DD, or fromDate after toDate',
        ),
        403: problem('API key missing or invalid, client not allowed, or permission not granted'),
        429: problem('Rate limit exceeded'),
        500: problem('Unexpected error'),
        503: {
          ...unavailable,
          description: `${unavailable.description} urn:case-read:problem:trail-unavailable: the audit trail (its store or archive) could not be read whole or a record did not verify, so nothing is answered.`,
        },
        504: gatewayTimeout('The system of record'),
      },
    }),
    getSubjectAccessRequestTemplate: createRoute({
      method: 'get',
      path: '/subject-access-request/template',
      operationId: 'getSubjectAccessRequestTemplate',
      middleware: guard('getSubjectAccessRequestTemplate'),
      tags: ['Subject access'],
      summary: "The template the SAR service renders this service's content with",
      description:
        'A mustache template (plain mustache, no helpers), the same bytes on every call: the renderer pins it by its SHA-256.',
      security,
      responses: {
        200: { description: 'The template', content: { 'text/plain': { schema: z.string() } } },
        403: problem('API key missing or invalid, client not allowed, or permission not granted'),
        429: problem('Rate limit exceeded'),
        500: problem('Unexpected error'),
        503: unavailable,
      },
    }),
  };
}
export type SubjectAccessRoutes = ReturnType<typeof subjectAccessRoutes>;
