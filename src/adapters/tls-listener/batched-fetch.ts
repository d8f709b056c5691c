/**
 * Hands requests to the app a batch at a time. Node reads the ready sockets one after
 * another, and without this each request's handling would run as soon as its socket was
 * read, between the reads of the others. Here every request read in one pass over the
 * sockets is started at the end of that pass (one `setImmediate`), one after another, so
 * the app's code runs back to back for the whole batch while it is hot in the CPU's caches.
 * Measured on the keep-alive bench: about 14% less CPU per request, more requests per
 * second, and lower p50 and p99 (see docs/performance.md). Nothing waits longer than the
 * end of the current pass.
 */
export function batchedFetch<E>(
  fetch: (request: Request, env: E) => Response | Promise<Response>,
): (request: Request, env: E) => Promise<Response> {
  let batch: (() => void)[] = [];
  const startBatch = () => {
    const starting = batch;
    batch = [];
    for (const start of starting) start();
  };
  return (request, env) =>
    new Promise<Response>((resolve, reject) => {
      if (batch.length === 0) setImmediate(startBatch);
      batch.push(() => {
        try {
          resolve(fetch(request, env));
        } catch (error) {
          reject(error);
        }
      });
    });
}
