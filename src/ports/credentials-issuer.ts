import type { QueueCredentials, QueueCredentialsRequest } from '../domain/queue/model.js';

/**
 * Issues temporary credentials for a consumer's queue (adapters: AWS STS, and a local
 * development issuer). Contract: the credentials are limited by the request's session
 * policy and expire after its duration; a failure of the upstream service is an
 * `UpstreamFailedError` (or `UpstreamTimeoutError`) carrying none of the upstream's text;
 * credentials never reach a log.
 */
export interface CredentialsIssuer {
  issue(request: QueueCredentialsRequest): Promise<QueueCredentials>;
}
