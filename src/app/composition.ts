import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { pino } from 'pino';
import { createHttpApp } from '../adapters/http/app.js';
import type { DocsAssets } from '../adapters/http/docs.js';
import type { AppEnv } from '../adapters/http/env.js';
import { FIXTURES_PATH, loadCaseFile } from '../adapters/memory/case-file.js';
import { InMemoryCaseRepository } from '../adapters/memory/case-repository.js';
import { SqliteCaseRepository } from '../adapters/sqlite/case-store.js';
import type { CrnFormat } from '../domain/crn.js';
import type { CaseRepository } from '../ports/case-repository.js';
import type { CaseStoreConfig, Config } from './config.js';

/**
 * The composition root: configuration in, adapters built, the app wired. Nothing else in
 * the code base chooses an adapter.
 */

export interface OpenedCaseRepository {
  readonly repository: CaseRepository;
  readonly description: string;
  close(): void;
}

export function openCaseRepository(store: CaseStoreConfig, crnFormat: CrnFormat): OpenedCaseRepository {
  switch (store.kind) {
    case 'memory': {
      const repository = new InMemoryCaseRepository(loadCaseFile(FIXTURES_PATH.pathname, { crnFormat }));
      return { repository, description: `memory (${repository.size} fixture cases)`, close: () => {} };
    }
    case 'sqlite': {
      const repository = SqliteCaseRepository.openReadOnly(store.path);
      return { repository, description: `sqlite:${store.path} (read-only)`, close: () => repository.close() };
    }
  }
}

/** Reads the Swagger UI assets from the swagger-ui-dist package, once. */
export function loadDocsAssets(): DocsAssets {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve('swagger-ui-dist/package.json'));
  return {
    css: readFileSync(join(root, 'swagger-ui.css'), 'utf8'),
    bundleJs: readFileSync(join(root, 'swagger-ui-bundle.js'), 'utf8'),
  };
}

export type Logger = pino.Logger;

export function createLogger(level: Config['LOG_LEVEL']): Logger {
  return pino({ level, base: { service: 'case-read-service' } });
}

export interface Service {
  readonly app: OpenAPIHono<AppEnv>;
  readonly caseStore: string;
  close(): void;
}

export function buildService(config: Config, logger: Logger): Service {
  const cases = openCaseRepository(config.CASE_STORE, config.CRN_PATTERN);
  const app = createHttpApp({
    repository: cases.repository,
    crnFormat: config.CRN_PATTERN,
    logger,
    docs: loadDocsAssets(),
    publicUrl: config.PUBLIC_URL,
  });
  return { app, caseStore: cases.description, close: () => cases.close() };
}
