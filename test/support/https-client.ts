import { Agent, type AgentOptions, request } from 'node:https';

/**
 * How long the tests' keep-alive agents keep an idle socket: well under the service's
 * keep-alive timeout (65 s unless `KEEP_ALIVE_TIMEOUT_MS` says otherwise), as a consumer
 * should (docs/consumers/calling-the-service.md). Without a `timeout`, Node's agent keeps
 * an idle socket for ever, and sends on it while the service is closing it.
 */
export const CONSUMER_IDLE_MS = 30_000;

/** A keep-alive agent that lets go of an idle socket after {@link CONSUMER_IDLE_MS}. */
export const consumerAgent = (options: AgentOptions = {}): Agent =>
  new Agent({ keepAlive: true, timeout: CONSUMER_IDLE_MS, ...options });

export interface HttpsResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): unknown;
  /** Sent on a connection an earlier request had used (a keep-alive agent's). */
  reusedSocket: boolean;
}

export interface HttpsOptions {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly servername?: string;
  /** A keep-alive agent to send it through (default: a fresh connection of its own). */
  readonly agent?: Agent;
  /** A request body, sent as it is. */
  readonly body?: string;
}

/**
 * One HTTPS request on a fresh connection, presenting the client certificate when given.
 * Rejects when the TLS handshake (or the connection) fails: then there was no HTTP response.
 */
export function httpsRequest(url: string, options: HttpsOptions): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        ca: options.ca,
        ...(options.cert ? { cert: options.cert } : {}),
        ...(options.key ? { key: options.key } : {}),
        headers: options.headers ?? {},
        agent: options.agent ?? false,
        servername: options.servername ?? 'localhost',
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text) as unknown,
            reusedSocket: req.reusedSocket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}
