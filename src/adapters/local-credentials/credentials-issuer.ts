import { randomBytes } from 'node:crypto';
import type { QueueCredentials, QueueCredentialsRequest } from '../../domain/queue/credentials.js';
import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * A development stand-in for STS (`CREDENTIALS_ISSUER=local`): random credentials of the
 * same shape, with a real expiry. They open nothing. Refused at start-up when
 * NODE_ENV=production.
 */
export class LocalCredentialsIssuer implements CredentialsIssuer {
  constructor(private readonly now: () => Date = () => new Date()) {}

  async issue(request: QueueCredentialsRequest): Promise<QueueCredentials> {
    const id = [...randomBytes(16)].map((b) => UPPER[b % UPPER.length]).join('');
    return {
      accessKeyId: `ASIA${id}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(96).toString('base64'),
      expiration: new Date(this.now().getTime() + request.durationSeconds * 1000),
    };
  }
}
