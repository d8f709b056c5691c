import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tracing } from '../../src/adapters/opentelemetry/tracing.js';
import { SqliteCaseRepository, SqliteCaseWriter } from '../../src/adapters/sqlite/case-store.js';
import type { UpstreamSettings } from '../../src/adapters/upstream/settings.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../src/adapters/upstream/settings.js';
import { CASE_READS } from '../../src/domain/case-operations.js';
import type { CaseRecord } from '../../src/domain/types.js';
import { AccessMother } from './mothers.js';
import { makeTestPki, type TestPki } from './pki.js';
import { mintTestToken, type RunningTestService, startTestService } from './service.js';

/**
 * A second instance of this service on loopback, serving `records` from a SQLite file
 * behind the whole perimeter, and the files an upstream client needs to reach it: a
 * client certificate, its key, the CA, an API key and a bearer token.
 */
export interface UpstreamInstance {
  readonly url: string;
  readonly pki: TestPki;
  readonly service: RunningTestService;
  readonly files: { cert: string; key: string; ca: string; apiKey: string; bearer: string };
  close(): Promise<void>;
}

/** The store context's upstream settings that reach `instance` with all three credentials. */
export function upstreamSettings(instance: UpstreamInstance, connections = 4): UpstreamSettings {
  return {
    connections,
    timeoutMs: 5000,
    retries: 2,
    timeZone: 'Europe/London',
    maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
    tlsCertFile: instance.files.cert,
    tlsKeyFile: instance.files.key,
    tlsCaFile: instance.files.ca,
    apiKeyFile: instance.files.apiKey,
    bearerFile: instance.files.bearer,
  };
}

export async function startUpstreamInstance(
  records: readonly CaseRecord[],
  options: { tracing?: Tracing } = {},
): Promise<UpstreamInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-upstream-'));
  const path = join(dir, 'cases.db');
  const writer = SqliteCaseWriter.open(path);
  writer.write(records);
  writer.close();
  const repository = SqliteCaseRepository.openReadOnly(path);
  const pki = await makeTestPki();
  const service = await startTestService(pki, { repository, ...options });
  await service.directory.saveClient(
    AccessMother.client('case-reader', {
      permissions: [...CASE_READS],
    }),
  );
  const client = await pki.client('case-reader');
  const { key } = await service.issueKey('case-reader');
  const file = (name: string, content: string) => {
    const where = join(dir, name);
    writeFileSync(where, content, { mode: 0o600 });
    return where;
  };
  return {
    url: service.url,
    pki,
    service,
    files: {
      cert: file('client.pem', client.certPem),
      key: file('client-key.pem', client.keyPem),
      ca: file('ca.pem', pki.ca.certPem),
      apiKey: file('api-key', key),
      bearer: file('bearer', await mintTestToken(pki, 'case-reader', { expiresInSeconds: 3600 })),
    },
    close: async () => {
      await service.close();
      repository.close();
      pki.cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
