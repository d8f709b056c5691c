// Load on one server: autocannon over keep-alive connections, or a new TLS connection for
// every request (handshake), both giving autocannon's result shape.
import { request } from 'node:https';
import autocannon from 'autocannon';

/**
 * A new TLS connection for every request. autocannon's reconnectRate drops the response of
 * the request it reconnects after (so reconnectRate: 1 counts nothing); this loop measures
 * the same thing directly, in autocannon's result shape.
 */
async function handshakeLoad({ port, path, method = 'GET', headers, durationS, connections, tls }) {
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  const deadline = performance.now() + durationS * 1000;
  const once = () =>
    new Promise((resolve) => {
      const started = performance.now();
      const req = request(
        { host: '127.0.0.1', port, path, method, headers, servername: 'localhost', agent: false, ...tls },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            if (res.statusCode < 200 || res.statusCode > 299) non2xx++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    requests: { average: latencies.length / durationS },
    latency: { p50: at(0.5), p99: at(0.99) },
    non2xx,
    errors,
  };
}

/**
 * `durationS` of requests to https://localhost:PORT/PATH from `connections` connections with
 * the client certificate `tls`; a new connection for each request if `reconnect`.
 */
export function load({
  port,
  path,
  method = 'GET',
  headers,
  durationS,
  connections,
  reconnect = false,
  tls,
}) {
  if (reconnect) return handshakeLoad({ port, path, method, headers, durationS, connections, tls });
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `https://localhost:${port}${path}`,
        method,
        headers,
        connections,
        duration: durationS,
        servername: 'localhost',
        tlsOptions: tls,
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** The body of one `GET PATH` (with `headers` and the client certificate `tls`), as text. */
export function fetchBody({ port, path, headers, tls }) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, servername: 'localhost', headers, ...tls },
      (res) => {
        let data = '';
        res.on('data', (c) => {
          data += c;
        });
        res.on('end', () => resolve(data));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
