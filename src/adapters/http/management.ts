import { Hono } from 'hono';

export interface ReadinessCheck {
  readonly name: string;
  /** Resolves when the part can serve; rejects (or throws) when it cannot. */
  check(): Promise<void> | void;
}

/** What `/info` says of the running service, as the estate's services say it (Spring Boot actuator's shape). */
export interface ServiceInfo {
  readonly build: { readonly name: string; readonly version: string };
  /** The commit it was built from, when known. */
  readonly git?: { readonly commit: { readonly id: string } };
  /** The estate's product id, when set. */
  readonly productId?: string;
}

export interface ManagementOptions {
  /** What `/info` answers. */
  readonly info?: ServiceInfo;
  readonly checks: readonly ReadinessCheck[];
  readonly metrics: { readonly contentType: string; text(): Promise<string> };
  /** True once shutdown has begun: readiness is then 503 whatever the stores say. */
  readonly shuttingDown?: () => boolean;
  /** How long each check may take before it counts as not answering (default 800 ms). */
  readonly checkWithinMs?: number;
}

/** Each readiness check's bound: the whole answer comes within a second whatever the engines do. */
const CHECK_WITHIN_MS = 800;

type CheckState = 'UP' | 'DOWN' | 'TIMEOUT';

/** One check's state: UP, DOWN when it failed, TIMEOUT when it did not answer in time (a stalled engine). */
async function stateOf(check: ReadinessCheck['check'], withinMs: number): Promise<CheckState> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<CheckState>((resolve) => {
    timer = setTimeout(resolve, withinMs, 'TIMEOUT');
  });
  try {
    return await Promise.race([
      Promise.resolve()
        .then(check)
        .then(
          (): CheckState => 'UP',
          (): CheckState => 'DOWN',
        ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The management listener's app (plain HTTP, for the platform, not for consumers):
 * `/health/live` (and `/health/ping`, the estate's name for it) says the process is up; `/info`
 * its build, commit and product id; `/health/ready` says whether every store can be
 * used, 503 naming the one that cannot (`DOWN`: it failed; `TIMEOUT`: it did not answer
 * within `checkWithinMs`, a stalled engine), within a second whatever the engines do, and
 * 503 from the moment shutdown begins; `/metrics`
 * is Prometheus text. Nothing here reads case data or needs credentials, and no answer
 * carries an error's text.
 */
export function createManagementApp({
  info,
  checks,
  metrics,
  shuttingDown = () => false,
  checkWithinMs = CHECK_WITHIN_MS,
}: ManagementOptions): Hono {
  const app = new Hono();
  app.use(async (c, next) => {
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    await next();
  });
  app.get('/health/live', (c) => c.json({ status: 'UP' }));
  // The estate's own liveness path: the process answers; no store is asked.
  app.get('/health/ping', (c) => c.json({ status: 'UP' }));
  app.get('/info', (c) => c.json(info ?? {}));
  app.get('/health/ready', async (c) => {
    if (shuttingDown()) return c.json({ status: 'DOWN', reason: 'shutting down' }, 503);
    const results = await Promise.all(
      checks.map(async ({ name, check }) => [name, await stateOf(check, checkWithinMs)] as const),
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
