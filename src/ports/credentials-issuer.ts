import type { QueueCredentials, QueueCredentialsRequest } from '../domain/queue/model.js';
import type { Deadline } from './deadline.js';

/**
 * Issues temporary credentials for a consumer's queue (adapters: AWS STS, and a local
 * development issuer). Contract: the credentials are limited by the request's session
 * policy and expire after its duration; a failure of the upstream service is an
 * `UpstreamFailedError` (or `UpstreamTimeoutError`) carrying none of the upstream's text;
 * credentials never reach a log.
 */
export interface CredentialsIssuer {
  /** Given the request's deadline, a call still unanswered when it passes is given up. */
  issue(request: QueueCredentialsRequest, deadline?: Deadline): Promise<QueueCredentials>;
}
