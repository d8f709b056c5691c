import { Transform } from 'node:stream';
import type { OutgoingTracing } from '../../ports/tracing.js';
import { isLoopbackHost } from './loopback.js';

/**
 * What the adapters that call AWS (ACM PCA, STS) do alike with their AWS SDK v3 clients:
 * build one from the service's settings, with the trace context on its requests, and read
 * its failures. This file imports no AWS package: it names only the few parts of the SDK it
 * uses.
 *
 * Each client is told its endpoint (the one aws-endpoints.ts found, which `config check`
 * shows) and not to look for one of its own (`ignoreConfiguredEndpointUrls`), verifies the
 * server's certificate whatever `NODE_TLS_REJECT_UNAUTHORIZED` says, and refuses to send a
 * request anywhere but `https://` or loopback, before it is signed (decisions §20).
 */

/** The settings of an AWS client that the service's configuration gives. */
export interface AwsClientSettings<Credentials> {
  readonly region: string;
  /**
   * The endpoint the configuration found (a VPC endpoint, an `AWS_ENDPOINT_URL_*`, a stand-in
   * in tests); else the SDK's regional endpoint.
   */
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
  /** No endpoint from AWS_ENDPOINT_URL* or the shared config: the configuration gave it, or none. */
  readonly ignoreConfiguredEndpointUrls: true;
  /** The SDK's Node handler, its HTTPS agent set to verify the server (shared with the credential providers' own clients). */
  readonly requestHandler: { readonly httpsAgent: { readonly rejectUnauthorized: true } };
}

/** An SDK middleware: it sees the request on its way out and what comes back. */
type Middleware = <Args extends { request: unknown }, Output>(
  next: (args: Args) => Promise<Output>,
) => (args: Args) => Promise<Output>;

/** An AWS SDK v3 client, as far as {@link createAwsClient} uses it. */
interface AwsClient {
  readonly middlewareStack: {
    add(middleware: Middleware, options: { step: 'build'; name: string }): void;
    add(middleware: Middleware, options: { step: 'finalizeRequest'; name: string }): void;
    add(middleware: Middleware, options: { step: 'deserialize'; name: string; priority: 'low' }): void;
  };
}

/**
 * The most read of one AWS answer. The SDKs read a whole answer before parsing it, however long
 * it is. STS's AssumeRole answer is about 1.5 KB, and ACM PCA's certificate with its chain a few
 * KB, so a MiB is a wide margin that still keeps a misbehaving endpoint or proxy from filling
 * memory.
 */
export const AWS_MAX_RESPONSE_BYTES = 1024 * 1024;

/** An AWS answer longer than {@link AWS_MAX_RESPONSE_BYTES}: refused unread or reading stopped, connection closed. */
export class AwsResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
}

/** The raw HTTP answer the SDK's handler gives its deserializer. */
interface RawResponse {
  readonly headers?: Readonly<Record<string, string | undefined>>;
  body?: unknown;
}

interface NodeReadable {
  pipe<T>(destination: T): T;
  on(event: 'error', listener: (error: Error) => void): unknown;
  destroy(error?: Error): unknown;
}

const isNodeReadable = (body: unknown): body is NodeReadable =>
  typeof (body as NodeReadable | undefined)?.pipe === 'function' &&
  typeof (body as NodeReadable | undefined)?.destroy === 'function';

/**
 * Bounds what the deserializer reads of `response`: a `Content-Length` over `max` is refused
 * before reading; otherwise the body passes through a counter that, past `max`, destroys the
 * connection's stream and fails the read with {@link AwsResponseTooLarge}.
 */
export function boundResponse(response: RawResponse, max: number = AWS_MAX_RESPONSE_BYTES): void {
  const body = response.body;
  if (!isNodeReadable(body)) return;
  const declared = response.headers?.['content-length'];
  if (declared !== undefined && /^\d{1,16}$/.test(declared) && Number(declared) > max) {
    body.on('error', () => {});
    body.destroy();
    throw new AwsResponseTooLarge(`Content-Length ${declared} over ${max}; not read`);
  }
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen <= max) {
        done(null, chunk);
        return;
      }
      body.destroy();
      done(new AwsResponseTooLarge(`longer than ${max} bytes; reading stopped there`));
    },
  });
  body.on('error', (error) => counted.destroy(error));
  response.body = body.pipe(counted);
}

/** A request that would leave the host unencrypted: refused before it is signed or sent. */
export class AwsInsecureEndpoint extends Error {
  override readonly name = 'InsecureEndpoint';
}

/** The SDK's HTTP request, as far as the endpoint guard reads it. */
interface OutgoingRequest {
  readonly protocol?: string;
  readonly hostname?: string;
}

/**
 * Refuses `request` unless it goes over https, or over http to a loopback host: the last
 * word whatever the SDK resolved (the endpoint rule is checked at start, this is the same
 * rule where the request leaves).
 */
export function guardEndpoint(request: OutgoingRequest): void {
  const { protocol, hostname = '' } = request;
  if (protocol === 'https:' || (protocol === 'http:' && isLoopbackHost(hostname))) return;
  throw new AwsInsecureEndpoint(`${protocol ?? '?'}//${hostname}: not https, not loopback; not sent`);
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
    ignoreConfiguredEndpointUrls: true,
    requestHandler: { httpsAgent: { rejectUnauthorized: true } },
  });
  // Once the request has its endpoint, before it is signed.
  client.middlewareStack.add(
    (next) => (args) => {
      guardEndpoint(args.request as OutgoingRequest);
      return next(args);
    },
    { step: 'build', name: 'endpointGuard' },
  );
  // Next to the HTTP handler, inside the deserializer: the answer's body is bounded before it is read.
  client.middlewareStack.add(
    (next) => async (args) => {
      const output = await next(args);
      const response = (output as { response?: RawResponse }).response;
      if (response !== undefined) boundResponse(response);
      return output;
    },
    { step: 'deserialize', name: 'responseBound', priority: 'low' },
  );
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
