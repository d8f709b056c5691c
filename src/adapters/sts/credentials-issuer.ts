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
import type { OutgoingTracing } from '../../ports/tracing.js';

export interface StsIssuerOptions {
  readonly region: string;
  /** e.g. a VPC endpoint, or a fake STS in tests; else the SDK's regional endpoint. */
  readonly endpoint?: string;
  /** Bounds the whole call, retries included. */
  readonly timeoutMs: number;
  /** Attempts per call (the SDK retries throttling and transient errors). */
  readonly maxAttempts?: number;
  /** The service's own AWS credentials; by default the SDK's provider chain finds them. */
  readonly credentials?: STSClientConfig['credentials'];
  /** A client span per call, and the trace context in its headers, when tracing is on. */
  readonly tracing?: OutgoingTracing;
}

const UPSTREAM = 'credentials service';

/** A short label for the operator's log: the STS error code and HTTP status, never the message (it names accounts and ARNs). */
function safeLabel(error: unknown): string {
  const name = (error as { name?: unknown })?.name;
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const code = typeof name === 'string' && /^[A-Za-z.]{1,64}$/.test(name) ? name : 'Error';
  return status === undefined ? code : `${code} (${status})`;
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  return name === 'AbortError' || name === 'TimeoutError' || name === 'DeadlineExceededError';
}

/**
 * Queue credentials from AWS STS `AssumeRole`: the client's role (or the default), a role
 * session name traceable to the request, the session tag `ClientId=<CN>`, a session policy
 * limited to reading that one queue, and the configured duration.
 */
export class StsCredentialsIssuer implements CredentialsIssuer {
  private readonly client: STSClient;

  constructor(private readonly options: StsIssuerOptions) {
    this.client = new STSClient({
      region: options.region,
      maxAttempts: options.maxAttempts ?? 2,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
    const tracing = options.tracing;
    if (tracing) {
      // Each HTTP request the SDK makes (retries too) carries the active trace context.
      this.client.middlewareStack.add(
        (next) => (args) => {
          const request = args.request as { headers?: Record<string, string> };
          if (request.headers) tracing.inject(request.headers);
          return next(args);
        },
        { step: 'finalizeRequest', name: 'traceContext' },
      );
    }
  }

  async issue(request: QueueCredentialsRequest, deadline?: Deadline): Promise<QueueCredentials> {
    let output: AssumeRoleCommandOutput;
    // Its own timeout, and the request's deadline: the first to pass gives the call up.
    const own = AbortSignal.timeout(this.options.timeoutMs);
    const abortSignal = deadline ? AbortSignal.any([own, deadline.signal]) : own;
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
      if (isTimeout(error)) throw new UpstreamTimeoutError(UPSTREAM);
      throw new UpstreamFailedError(UPSTREAM, safeLabel(error));
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
