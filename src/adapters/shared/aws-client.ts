import type { OutgoingTracing } from '../../ports/tracing.js';

/**
 * What the adapters that call AWS (ACM PCA, STS) do alike with their AWS SDK v3 clients:
 * build one from the service's settings, with the trace context on its requests, and read
 * its failures. This file imports no AWS package: it names only the few parts of the SDK it
 * uses.
 */

/** The settings of an AWS client that the service's configuration gives. */
export interface AwsClientSettings<Credentials> {
  readonly region: string;
  /** e.g. a VPC endpoint, or a stand-in in tests; else the SDK's regional endpoint. */
  readonly endpoint?: string;
  /** The service's own AWS credentials; by default the SDK's provider chain finds them. */
  readonly credentials?: Credentials | undefined;
  /** Attempts per call (the SDK retries throttling and transient errors); 2 unless given. */
  readonly maxAttempts?: number;
  /** A client span per call, and the trace context in its headers, when tracing is on. */
  readonly tracing?: OutgoingTracing;
}

/** What an AWS SDK client is built with: the endpoint and credentials only when given. */
interface AwsClientConfig<Credentials> {
  readonly region: string;
  readonly maxAttempts: number;
  readonly endpoint?: string;
  readonly credentials?: Credentials;
}

/** An SDK middleware that puts the active trace context in the headers of the request it passes on. */
type TraceContextMiddleware = <Args extends { request: unknown }, Output>(
  next: (args: Args) => Promise<Output>,
) => (args: Args) => Promise<Output>;

/** An AWS SDK v3 client, as far as {@link createAwsClient} uses it. */
interface AwsClient {
  readonly middlewareStack: {
    add(middleware: TraceContextMiddleware, options: { step: 'finalizeRequest'; name: string }): void;
  };
}

/**
 * A client of the AWS SDK v3 client class `Client` with these settings. With tracing on,
 * each HTTP request it sends (retries too) carries the active trace context.
 */
export function createAwsClient<Client extends AwsClient, Credentials>(
  Client: new (config: AwsClientConfig<Credentials>) => Client,
  settings: AwsClientSettings<Credentials>,
): Client {
  const client = new Client({
    region: settings.region,
    maxAttempts: settings.maxAttempts ?? 2,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
  });
  const tracing = settings.tracing;
  if (tracing) {
    client.middlewareStack.add(
      (next) => (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) tracing.inject(request.headers);
        return next(args);
      },
      { step: 'finalizeRequest', name: 'traceContext' },
    );
  }
  return client;
}

/**
 * A short label of an AWS error for the operator's log: its error name and HTTP status,
 * never the message (it names accounts and ARNs).
 */
export function awsErrorLabel(error: unknown): string {
  const name = (error as { name?: unknown })?.name;
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const code = typeof name === 'string' && /^[A-Za-z.]{1,64}$/.test(name) ? name : 'Error';
  return typeof status === 'number' ? `${code} (${status})` : code;
}

/** Whether an AWS call failed by running out of time (its abort signal, or the SDK's own timeout). */
export function isAwsTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  return name === 'AbortError' || name === 'TimeoutError' || name === 'DeadlineExceededError';
}
