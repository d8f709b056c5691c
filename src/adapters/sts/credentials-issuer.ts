import {
  AssumeRoleCommand,
  type AssumeRoleCommandOutput,
  STSClient,
  type STSClientConfig,
} from '@aws-sdk/client-sts';
import { UpstreamFailedError, UpstreamTimeoutError } from '../../domain/errors.js';
import type { QueueCredentials, QueueCredentialsRequest } from '../../domain/queue/credentials.js';
import type { CredentialsIssuer } from '../../ports/credentials-issuer.js';
import type { Deadline } from '../../ports/deadline.js';
import {
  type AwsClientSettings,
  awsErrorLabel,
  createAwsClient,
  isAwsTimeout,
} from '../shared/aws-client.js';
import { callBudget } from '../shared/call-budget.js';

export interface StsIssuerOptions extends AwsClientSettings<STSClientConfig['credentials']> {
  /** Bounds the whole call, retries included. */
  readonly timeoutMs: number;
}

const UPSTREAM = 'credentials service';

/**
 * Queue credentials from AWS STS `AssumeRole`: the client's role (or the default), a role
 * session name traceable to the request, the session tag `ClientId=<CN>`, a session policy
 * limited to reading that one queue, and the configured duration.
 */
export class StsCredentialsIssuer implements CredentialsIssuer {
  private readonly client: STSClient;

  constructor(private readonly options: StsIssuerOptions) {
    this.client = createAwsClient(STSClient, options);
  }

  async issue(request: QueueCredentialsRequest, deadline?: Deadline): Promise<QueueCredentials> {
    let output: AssumeRoleCommandOutput;
    // Its own timeout, and the request's deadline: the first to pass gives the call up.
    const budget = callBudget(this.options.timeoutMs, deadline);
    const abortSignal = budget.signal;
    const send = (command: AssumeRoleCommand) => this.client.send(command, { abortSignal });
    try {
      const command = new AssumeRoleCommand({
        RoleArn: request.roleArn,
        RoleSessionName: request.sessionName,
        DurationSeconds: request.durationSeconds,
        Policy: request.sessionPolicy,
        Tags: [{ Key: 'ClientId', Value: request.clientId }],
      });
      output = await (this.options.tracing
        ? this.options.tracing.outgoing('STS AssumeRole', { 'rpc.system': 'aws-api' }, () => send(command))
        : send(command));
    } catch (error) {
      if (isAwsTimeout(error)) throw new UpstreamTimeoutError(UPSTREAM);
      throw new UpstreamFailedError(UPSTREAM, awsErrorLabel(error));
    } finally {
      budget.end();
    }
    const c = output.Credentials;
    if (
      !c?.AccessKeyId ||
      !c.SecretAccessKey ||
      !c.SessionToken ||
      !(c.Expiration instanceof Date) ||
      Number.isNaN(c.Expiration.getTime())
    ) {
      throw new UpstreamFailedError(UPSTREAM, 'IncompleteResponse');
    }
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      sessionToken: c.SessionToken,
      expiration: c.Expiration,
    };
  }

  close(): void {
    this.client.destroy();
  }
}
