import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createManagementApp } from '../../../src/adapters/http/management.js';
import { PrometheusMetrics } from '../../../src/adapters/prometheus/metrics.js';
import { ConfigError, loadConfig } from '../../../src/app/composition/config.js';
import { serviceInfoOf } from '../../../src/app/composition/service-info.js';
import { STORE_REGISTRY } from '../../../src/app/composition/store-kinds.js';
import { ROOT } from '../../support/cli.js';

/**
 * The estate's health conventions on the management listener (decisions §22): `/health/ping`
 * and `/info`, its build from package.json, its commit and product id only when set, each
 * variable refused at start when it is not well formed.
 */

const BASE = {
  TLS_CERT: '/etc/case-read/server.pem',
  TLS_KEY: '/etc/case-read/server-key.pem',
  TLS_CLIENT_CA: '/etc/case-read/clients-ca.pem',
  BEARER_JWKS: '/etc/case-read/jwks.json',
  BEARER_ISSUER: 'https://issuer.example',
  BEARER_AUDIENCE: 'case-read-service',
};
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const metrics = new PrometheusMetrics();
const managementOf = (env: Record<string, string>) =>
  createManagementApp({
    info: serviceInfoOf(loadConfig({ ...BASE, ...env }, STORE_REGISTRY)),
    checks: [],
    metrics,
  });

describe('the estate health conventions', () => {
  it('/health/ping is UP, asking no store', async () => {
    const app = createManagementApp({
      checks: [{ name: 'auditStore', check: () => Promise.reject(new Error('down')) }],
      metrics,
    });
    const res = await app.request('/health/ping');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'UP' });
  });

  it('/info names the build, and the commit and product id only when they are set', async () => {
    const bare = await (await managementOf({})).request('/info');
    expect(bare.status).toBe(200);
    expect(await bare.json()).toEqual({ build: { name: PACKAGE.name, version: PACKAGE.version } });
    const full = await managementOf({ GIT_COMMIT: 'ABCDEF1234567', PRODUCT_ID: 'DPS123' }).request('/info');
    expect(await full.json()).toEqual({
      build: { name: PACKAGE.name, version: PACKAGE.version },
      git: { commit: { id: 'abcdef1234567' } },
      productId: 'DPS123',
    });
    // An empty variable (an image built without the argument) is unset.
    expect(await (await managementOf({ GIT_COMMIT: '' }).request('/info')).json()).not.toHaveProperty('git');
  });

  it.each([
    ['GIT_COMMIT', 'main'],
    ['GIT_COMMIT', 'abc12'],
    ['PRODUCT_ID', 'a b'],
    ['PRODUCT_ID', 'x\u0007'],
    ['PRODUCT_ID', 'p'.repeat(65)],
  ])('refuses %s=%j at start, naming it', (name, value) => {
    let problems: readonly string[] = [];
    try {
      loadConfig({ ...BASE, [name]: value }, STORE_REGISTRY);
    } catch (error) {
      if (error instanceof ConfigError) problems = error.problems;
    }
    expect(problems.some((p) => p.startsWith(`${name}:`))).toBe(true);
  });
});
