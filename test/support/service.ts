import { generateApiKey, sha256Hasher } from '../../src/adapters/crypto/api-keys.js';
import { createHttpApp } from '../../src/adapters/http/app.js';
import type { Engine } from '../../src/adapters/http/deadline.js';
import type { HttpLogger } from '../../src/adapters/http/env.js';
import type { EstDeps } from '../../src/adapters/http/est.handlers.js';
import { type IdentityReader, trustedGatewayIdentity } from '../../src/adapters/http/identity.js';
import type { AuditFailure, DeadlineOptions } from '../../src/adapters/http/request-cycle.js';
import { type MintOptions, mintToken } from '../../src/adapters/jose/dev-issuer.js';
import { JoseTokenVerifier } from '../../src/adapters/jose/token-verifier.js';
import { LocalCredentialsIssuer } from '../../src/adapters/local-credentials/credentials-issuer.js';
import { InMemoryAccessDirectory } from '../../src/adapters/memory/access-directory.js';
import { InMemoryCaseRepository } from '../../src/adapters/memory/case-repository.js';
import { InMemoryRateLimiter } from '../../src/adapters/memory/rate-limiter.js';
import type { Tracing } from '../../src/adapters/opentelemetry/tracing.js';
import { peerCertificateOf } from '../../src/adapters/tls-listener/peer-certificate.js';
import { startServer } from '../../src/adapters/tls-listener/server.js';
import { cachedForwardedCertificates } from '../../src/adapters/x509/forwarded-certificate.js';
import { runtimeOf } from '../../src/app/composition/runtime.js';
import type { BearerMode } from '../../src/domain/access/admit.js';
import type { ApiKeyRecord } from '../../src/domain/access/model.js';
import type { Quota } from '../../src/domain/access/quota.js';
import { CrnFormat } from '../../src/domain/crn.js';
import type { AuditWriter } from '../../src/ports/audit-log.js';
import type { CaseRepository } from '../../src/ports/case-repository.js';
import type { Clock } from '../../src/ports/clock.js';
import type { CredentialsIssuer } from '../../src/ports/credentials-issuer.js';
import { fixtureCases } from './fixtures.js';
import type { TestPki } from './pki.js';

export const TEST_ISSUER = 'https://issuer.test';
export const TEST_AUDIENCE = 'case-read-service';

/** A bearer token from the test PKI's issuer, for TEST_ISSUER and TEST_AUDIENCE, valid 10 minutes unless overridden. */
export function mintTestToken(
  pki: TestPki,
  clientId: string,
  extra: Partial<MintOptions> = {},
): Promise<string> {
  return mintToken({
    privateJwk: pki.issuer.privateJwk,
    issuer: TEST_ISSUER,
    audience: TEST_AUDIENCE,
    clientId,
    expiresInSeconds: 600,
    ...extra,
  });
}

export interface RunningTestService {
  readonly url: string;
  readonly directory: InMemoryAccessDirectory;
  /** Issues a key for a client, stores its hash, and returns the full key. */
  issueKey(clientId: string, overrides?: Partial<ApiKeyRecord>): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

/** The real HTTPS listener with the whole perimeter, over the fixtures and an in-memory directory. */
export async function startTestService(
  pki: TestPki,
  options: {
    bearerMode?: BearerMode;
    identityMode?: 'tls' | 'trusted-header';
    /** With `identityMode: 'trusted-header'`: the gateway CNs (default `gateway`). */
    trustedGateways?: readonly string[];
    crl?: string;
    clock?: Clock;
    issuer?: CredentialsIssuer;
    rateLimit?: Quota;
    audit?: AuditWriter;
    defaultRoleArn?: string;
    logger?: HttpLogger;
    /** The cases served (default: the fixtures, in memory). */
    repository?: CaseRepository;
    /** Tracing on: server spans, and the ports in spans, as `serve` wires them. */
    tracing?: Tracing;
    /** Certificate renewal (EST), and the window in which responses say when the certificate ends. */
    certificates?: EstDeps;
    renewWithinDays?: number;
    /** Deadlines and overload, and what the metrics are told of them. */
    deadlines?: DeadlineOptions;
    deadlineExceeded?: (engine: Engine) => void;
    overloaded?: () => void;
    auditFailed?: (outcome: AuditFailure) => void;
  } = {},
): Promise<RunningTestService> {
  const directory = new InMemoryAccessDirectory();
  const clock = options.clock ?? { now: () => new Date() };
  const peer: IdentityReader = (_request, env) => peerCertificateOf(env);
  const identify: IdentityReader =
    options.identityMode === 'trusted-header'
      ? trustedGatewayIdentity(
          new Set(options.trustedGateways ?? ['gateway']),
          peer,
          cachedForwardedCertificates(),
        )
      : peer;
  const tracing = options.tracing;
  const traced = <T extends object>(port: T, role: string): T =>
    tracing ? tracing.traced(port, role, { 'db.system.name': 'memory' }) : port;
  const app = createHttpApp({
    ...(tracing ? { tracer: tracing.tracer } : {}),
    repository: traced(options.repository ?? new InMemoryCaseRepository(fixtureCases()), 'cases'),
    crnFormat: CrnFormat.default,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.audit ? { audit: traced(options.audit, 'audit') } : {}),
    ...(options.deadlines ? { deadlines: options.deadlines } : {}),
    ...(options.certificates ? { certificates: options.certificates } : {}),
    ...(options.deadlineExceeded ? { deadlineExceeded: options.deadlineExceeded } : {}),
    ...(options.overloaded ? { overloaded: options.overloaded } : {}),
    ...(options.auditFailed ? { auditFailed: options.auditFailed } : {}),
    queueTokens: {
      issuer: traced(options.issuer ?? new LocalCredentialsIssuer(), 'credentials'),
      defaultRoleArn: options.defaultRoleArn ?? null,
      durationSeconds: 900,
    },
    perimeter: {
      rateLimit: {
        limiter: traced(new InMemoryRateLimiter(), 'rateLimit'),
        defaultQuota: options.rateLimit ?? { limit: 1_000_000, windowMs: 1000 },
      },
      identify,
      directory: traced(directory, 'access'),
      hasher: sha256Hasher,
      clock,
      verifier: new JoseTokenVerifier({
        bearer: { jwks: pki.jwksPath, issuer: TEST_ISSUER, audience: TEST_AUDIENCE },
        now: () => clock.now(),
      }),
      bearerMode: options.bearerMode ?? 'required',
      ...(options.renewWithinDays !== undefined ? { renewWithinDays: options.renewWithinDays } : {}),
    },
  });
  const server = await startServer(app.fetch, {
    host: '127.0.0.1',
    port: 0,
    // The listener `serve` picks for the runtime these tests run on.
    tlsListener: runtimeOf().tlsListener,
    tls: {
      cert: `${pki.server.certPem}\n${pki.ca.certPem}`,
      key: pki.server.keyPem,
      clientCa: pki.ca.certPem,
      ...(options.crl ? { crl: options.crl } : {}),
    },
  });
  return {
    url: server.url.replace('127.0.0.1', 'localhost'),
    directory,
    async issueKey(clientId, overrides = {}) {
      const generated = generateApiKey();
      await directory.addApiKey({
        id: generated.id,
        clientId,
        secretHash: generated.secretHash,
        createdAt: new Date(),
        expiresAt: null,
        revokedAt: null,
        ...overrides,
      });
      return { id: generated.id, key: generated.key };
    },
    close: () => server.close(),
  };
}
