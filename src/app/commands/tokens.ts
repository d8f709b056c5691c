import type { JWK } from 'jose';
import {
  DEV_AUDIENCE,
  DEV_ISSUER,
  mintToken,
  readRegularFileSync,
  thumbprintOfPem,
} from '../composition/operator.js';
import { parseDuration } from '../durations.js';
import { clientIdOf } from './arguments.js';
import { devFiles, readRequired } from './dev-dir.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, report } from './io.js';

/**
 * `tokens mint --client CN [--dir DIR] [--expires-in DURATION] [--bind-cert PEM]`: a bearer
 * token from the development issuer, for `iss` BEARER_ISSUER and `aud` BEARER_AUDIENCE
 * (defaults: the dev issuer's). Prints the token alone on its line.
 */
export async function mint(
  values: {
    client: string;
    dir: string;
    expiresIn: string;
    bindCert?: string | undefined;
    json?: boolean | undefined;
  },
  io: Io,
): Promise<number> {
  const clientId = clientIdOf(values.client);
  let expiresInMs: number;
  try {
    expiresInMs = parseDuration(values.expiresIn, '--expires-in');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const dir = values.dir;
  const files = devFiles(dir);
  let privateJwk: JWK;
  try {
    privateJwk = JSON.parse(readRequired(files.issuerKey, 'run case-read pki init --dir DIR first')) as JWK;
  } catch (error) {
    if (error instanceof CommandError) throw error;
    throw new CommandError(`${files.issuerKey} is not a JSON key`);
  }
  let certificateThumbprint: string | undefined;
  if (values.bindCert !== undefined) {
    const path = values.bindCert;
    // A regular file (a FIFO is refused, never waited on), then a certificate.
    const pem = readRegularFileSync(
      '--bind-cert',
      path,
      (message) => new CommandError(message),
    ).bytes.toString('utf8');
    try {
      certificateThumbprint = thumbprintOfPem(pem);
    } catch {
      throw new CommandError(`--bind-cert: ${path} is not a readable PEM certificate`);
    }
  }
  const token = await mintToken({
    privateJwk,
    issuer: io.env.BEARER_ISSUER || DEV_ISSUER,
    audience: io.env.BEARER_AUDIENCE || DEV_AUDIENCE,
    clientId,
    expiresInSeconds: Math.ceil(expiresInMs / 1000),
    ...(certificateThumbprint ? { certificateThumbprint } : {}),
  });
  report(
    io,
    values.json,
    { token, client: clientId, expiresInSeconds: Math.ceil(expiresInMs / 1000) },
    token,
  );
  return EXIT.ok;
}
