import { keySetFrom } from '../../adapters/jose/token-verifier.js';
import { readTlsFiles } from '../composition.js';
import { loadConfig, SERVE_VARIABLES } from '../config.js';
import { displayStore, isStoreRef } from '../stores.js';
import { EXIT, type Io, parse, positionals, report } from './common.js';

/** Hides passwords in URLs and any value whose name says it is a secret. */
export function maskValue(name: string, value: string): string {
  if (/SECRET|PASSWORD|TOKEN|API_KEY/i.test(name)) return '********';
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:********@');
}

/** A parsed configuration value as the operator wrote it: a store, a pattern, a quota, or plain. */
function display(value: unknown): string {
  if (typeof value !== 'object' || value === null) return String(value);
  if (isStoreRef(value)) return displayStore(value);
  const v = value as { pattern?: string; limit?: number; windowMs?: number };
  if (v.pattern !== undefined) return v.pattern;
  if (v.limit !== undefined) return `${v.limit}/${v.windowMs}ms`;
  return String(value);
}

/** `config check`: validates the configuration as `serve` would, and prints it with secrets masked. */
export async function configCheck(args: string[], io: Io): Promise<number> {
  const { values, positionals: rest } = parse(args, { json: { type: 'boolean' } });
  positionals(rest, []);
  const config = loadConfig(io.env);
  readTlsFiles(config);
  if (config.BEARER_MODE !== 'off' && config.BEARER_JWKS && !/^https:/i.test(config.BEARER_JWKS)) {
    try {
      keySetFrom(config.BEARER_JWKS);
    } catch (error) {
      throw new Error(`BEARER_JWKS: ${(error as Error).message}`);
    }
  }
  const effective: Record<string, { value: string; source: 'environment' | 'default' }> = {};
  for (const name of SERVE_VARIABLES) {
    const fromEnv = io.env[name];
    const value = config[name as keyof typeof config];
    if (value === undefined) continue;
    const shown = display(value);
    effective[name] = { value: maskValue(name, shown), source: fromEnv ? 'environment' : 'default' };
  }
  report(io, values.json, effective, [
    'configuration is valid',
    ...Object.entries(effective).map(
      ([name, { value, source }]) =>
        `  ${name.padEnd(16)} ${value}${source === 'default' ? '  (default)' : ''}`,
    ),
  ]);
  return EXIT.ok;
}
