import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../composition/operator.js';
import { CommandError } from './exit.js';

/**
 * The files of a development PKI directory (`case-read pki init --dir DIR`). Private keys
 * are written readable by their owner only.
 */
export const devFiles = (dir: string) => ({
  caCert: join(dir, 'ca.pem'),
  caKey: join(dir, 'ca-key.pem'),
  serverCert: join(dir, 'server.pem'),
  serverKey: join(dir, 'server-key.pem'),
  issuerKey: join(dir, 'issuer-key.json'),
  jwks: join(dir, 'jwks.json'),
  clientCert: (cn: string) => join(dir, `${cn}.pem`),
  clientKey: (cn: string) => join(dir, `${cn}-key.pem`),
});

export function writeSecretFile(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
}

export function writePublicFile(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o644 });
}

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

export function readRequired(path: string, hint: string): string {
  if (!existsSync(path)) throw new CommandError(`${path} does not exist; ${hint}`);
  return readRegularFileSync('', path, (message) => new CommandError(message.trimStart())).bytes.toString(
    'utf8',
  );
}
