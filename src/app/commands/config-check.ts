import { SERVICE_VARIABLES, STORE_VARIABLE_NAMES } from '../composition/config.js';
import { hopLines, hopsOf } from '../composition/hops.js';
import {
  keySetFrom,
  readAuditSigner,
  readAuditWitnessPolicy,
  readListenerTls,
  witnessUrls,
} from '../composition/operator.js';
import { loadServiceConfig, STORE_REGISTRY } from '../composition/store-kinds.js';
import { EXIT } from './exit.js';
import { type Io, report } from './io.js';

/** Hides passwords in URLs and any value whose name says it is a secret. */
export function maskValue(name: string, value: string): string {
  if (/SECRET|PASSWORD|TOKEN|API_KEY|HEADERS/i.test(name)) return '********';
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:********@');
}

/** A parsed configuration value as the operator wrote it: a pattern, a quota, or plain. */
function display(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  const v = value as { pattern?: string; limit?: number; windowMs?: number };
  if (v.pattern !== undefined) return v.pattern;
  if (v.limit !== undefined) return `${v.limit}/${v.windowMs}ms`;
  return String(value);
}

/** `config check`: validates the configuration as `serve` would, and prints it with secrets masked. */
export async function configCheck(values: { json?: boolean | undefined }, io: Io): Promise<number> {
  const config = loadServiceConfig(io.env);
  // Read and checked as `serve` does at start and on every reload.
  readListenerTls(config);
  const auditSigner = await readAuditSigner(config);
  const witnessPolicy = readAuditWitnessPolicy(config, auditSigner);
  // The key set files, read as `serve` reads them (a URL is fetched when a token first needs it).
  const keySetFiles = [
    config.BEARER_MODE === 'off' ? undefined : (['BEARER_JWKS', config.BEARER_JWKS] as const),
    config.SAR_PORT === undefined ? undefined : (['SAR_AUTH_JWKS', config.SAR_AUTH_JWKS] as const),
  ];
  for (const [name, source] of keySetFiles.filter((file) => file !== undefined)) {
    if (source === undefined || /^https:/i.test(source)) continue;
    try {
      keySetFrom(source);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`);
    }
  }
  const effective: Record<string, { value: string; source: 'environment' | 'default' }> = {};
  const source = (name: string): 'environment' | 'default' => (io.env[name] ? 'environment' : 'default');
  for (const name of SERVICE_VARIABLES) {
    const value = config[name];
    if (value === undefined) continue;
    effective[name] = { value: maskValue(name, display(value)), source: source(name) };
  }
  // The signing key is shown by its id, never its contents.
  if (auditSigner && effective.AUDIT_SIGNING_KEY) {
    effective.AUDIT_SIGNING_KEY = {
      ...effective.AUDIT_SIGNING_KEY,
      value: `${effective.AUDIT_SIGNING_KEY.value} (key id ${auditSigner.keyId})`,
    };
  }
  for (const name of STORE_VARIABLE_NAMES) {
    effective[name] = { value: maskValue(name, STORE_REGISTRY.display(config[name])), source: source(name) };
  }
  // Each store kind's own variables, as set or by their defaults (all validated above).
  for (const { name, fallback, secret } of STORE_REGISTRY.variables()) {
    const value = io.env[name] || fallback;
    if (value === undefined) continue;
    effective[name] = { value: secret ? '********' : maskValue(name, value), source: source(name) };
  }
  report(io, values.json, effective, [
    'configuration is valid',
    ...Object.entries(effective).map(
      ([name, { value, source }]) =>
        `  ${name.padEnd(16)} ${value}${source === 'default' ? '  (default)' : ''}`,
    ),
    ...hopLines(hopsOf(config, io.env, witnessUrls(witnessPolicy))),
  ]);
  return EXIT.ok;
}
