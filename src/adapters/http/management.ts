import { Hono } from 'hono';

export interface ReadinessCheck {
  readonly name: string;
  /** Resolves when the part can serve; rejects (or throws) when it cannot. */
  check(): Promise<void> | void;
}

export interface ManagementOptions {
  readonly checks: readonly ReadinessCheck[];
  readonly metrics: { readonly contentType: string; text(): Promise<string> };
  /** True once shutdown has begun: readiness is then 503 whatever the stores say. */
  readonly shuttingDown?: () => boolean;
}

/**
 * The management listener's app (plain HTTP, for the platform, not for consumers):
 * `/health/live` says the process is up; `/health/ready` says whether every store can be
 * used, 503 naming the one that cannot, and 503 from the moment shutdown begins; `/metrics`
 * is Prometheus text. Nothing here reads case data or needs credentials, and no answer
 * carries an error's text.
 */
export function createManagementApp({
  checks,
  metrics,
  shuttingDown = () => false,
}: ManagementOptions): Hono {
  const app = new Hono();
  app.use(async (c, next) => {
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    await next();
  });
  app.get('/health/live', (c) => c.json({ status: 'UP' }));
  app.get('/health/ready', async (c) => {
    if (shuttingDown()) return c.json({ status: 'DOWN', reason: 'shutting down' }, 503);
    const results = await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await check();
          return [name, 'UP'] as const;
        } catch {
          return [name, 'DOWN'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'UP');
    return c.json({ status: ready ? 'UP' : 'DOWN', checks: Object.fromEntries(results) }, ready ? 200 : 503);
  });
  app.get('/metrics', async (c) =>
    c.body(await metrics.text(), 200, { 'Content-Type': metrics.contentType }),
  );
  app.notFound((c) => c.json({ status: 404, detail: 'no such management endpoint' }, 404));
  return app;
}
