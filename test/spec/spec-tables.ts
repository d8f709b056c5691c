/**
 * The interface specification's resource and endpoint tables, restated as test data so the
 * tests never read the specification file. Source: "Resources and their fields" and
 * "Endpoints" of the interface specification (version 1.0). A table without a Nullable
 * column has no nullable field.
 */

export type FieldType = 'string' | 'boolean' | 'date-time' | { ref: string } | { arrayOf: string };

export interface SpecField {
  readonly name: string;
  readonly type: FieldType;
  readonly required: boolean;
  readonly nullable: boolean;
}

const f = (name: string, type: FieldType, required: boolean, nullable = false): SpecField => ({
  name,
  type,
  required,
  nullable,
});

export const SPEC_RESOURCES: Readonly<Record<string, readonly SpecField[]>> = {
  CodeAndDescription: [f('code', 'string', true), f('description', 'string', true)],
  PersonalDetailsAndCircumstances: [
    f('preferredLanguage', { ref: 'CodeAndDescription' }, false, true),
    f('personalCircumstances', { arrayOf: 'PersonCircumstance' }, false, true),
    f('disabilities', { arrayOf: 'Disability' }, false, true),
    f('offenderPersonalityDisorder', { ref: 'OffenderPersonalityDisorder' }, false, true),
  ],
  PersonCircumstance: [
    f('type', { ref: 'CodeAndDescription' }, true),
    f('subType', { ref: 'CodeAndDescription' }, true),
    f('updatedAt', 'date-time', true),
  ],
  Disability: [f('type', { ref: 'CodeAndDescription' }, true), f('updatedAt', 'date-time', true)],
  OffenderPersonalityDisorder: [f('status', { ref: 'CodeAndDescription' }, true)],
  HomeOfficeInterest: [f('exists', 'boolean', true, false), f('notes', 'string', false, true)],
  CommunityOffenderManager: [
    f('crn', 'string', true),
    f('communityManager', { ref: 'CommunityManager' }, true),
  ],
  CommunityManager: [
    f('name', { ref: 'Name' }, true, false),
    f('pdu', 'string', true, false),
    f('jobRole', 'string', false, true),
    f('emailAddress', 'string', false, true),
    f('officeName', 'string', false, true),
    f('teamPhoneNumber', 'string', false, true),
  ],
  Name: [
    f('forename', 'string', true, false),
    f('middleName', 'string', false, true),
    f('surname', 'string', true, false),
  ],
};

export interface SpecEndpoint {
  readonly method: 'get';
  readonly path: string;
  readonly operationId: string;
  readonly response: string;
}

export const SPEC_ENDPOINTS: readonly SpecEndpoint[] = [
  { method: 'get', path: '/case/{crn}', operationId: 'getCase', response: 'PersonalDetailsAndCircumstances' },
  {
    method: 'get',
    path: '/case/{crn}/home-office-interest',
    operationId: 'getHomeOfficeInterest',
    response: 'HomeOfficeInterest',
  },
  {
    method: 'get',
    path: '/case/{crn}/community-manager',
    operationId: 'getCommunityManagerByCrn',
    response: 'CommunityOffenderManager',
  },
];

/**
 * `POST /token` (specification: "Endpoints"): not versioned, no request body, client
 * certificate and API key only. Its response fields are not shown in the specification;
 * decisions §3 takes the STS Credentials object, field names as STS gives them.
 */
export const SPEC_TOKEN_ENDPOINT = {
  method: 'post',
  path: '/token',
  operationId: 'issueQueueToken',
  response: 'QueueCredentials',
  fields: ['AccessKeyId', 'SecretAccessKey', 'SessionToken', 'Expiration'],
} as const;

/**
 * The versioned gateway path (specification: "Versioned gateway paths"; payload from
 * decisions §4). Client certificate and API key; the bearer requirement covers only the
 * three /case operations.
 */
export const SPEC_RISK_ENDPOINT = {
  method: 'get',
  path: '/v1/persons/{crn}/risks/scores',
  operationId: 'getRiskScores',
  response: 'RiskPredictorScores',
  predictorFields: [
    'completedDate',
    'assessmentStatus',
    'generalPredictor',
    'violencePredictor',
    'groupReconviction',
    'riskOfSeriousRecidivism',
    'sexualPredictor',
  ],
  paginationFields: ['isLastPage', 'count', 'page', 'perPage', 'totalCount', 'totalPages'],
  levels: ['LOW', 'MEDIUM', 'HIGH', 'VERY_HIGH', 'NOT_APPLICABLE'],
} as const;

/**
 * Certificate renewal over EST (decisions §12): not versioned, under `/.well-known/est/`,
 * client certificate and API key, permission `renewCertificate`.
 */
export const SPEC_EST_ENDPOINTS = [
  { method: 'post', path: '/.well-known/est/simplereenroll', operationId: 'renewCertificate' },
  { method: 'get', path: '/.well-known/est/cacerts', operationId: 'getCaCertificates' },
] as const;

/**
 * The estate's subject access request (decisions §22): not versioned, client certificate and
 * API key, each operation its own permission.
 */
export const SPEC_SAR_ENDPOINTS = [
  { method: 'get', path: '/subject-access-request', operationId: 'getSubjectAccessRequest' },
  { method: 'get', path: '/subject-access-request/template', operationId: 'getSubjectAccessRequestTemplate' },
] as const;
