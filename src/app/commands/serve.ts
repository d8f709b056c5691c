import { ConfigError } from '../composition/config.js';
import {
  type ListenerSettings,
  type RunningServer,
  runtimeOf,
  startApiListener,
  startManagementListener,
  startSarListener,
  whyNotCrl,
  whyNotServe,
} from '../composition/runtime.js';
import {
  buildService,
  createLogger,
  type Logger,
  loadServiceConfig,
  type Service,
} from '../composition/service.js';
import { EXIT } from './exit.js';
import type { Io } from './io.js';

export async function serve(io: Io): Promise<number> {
  const config = loadServiceConfig(io.env);
  const logger = createLogger(config.LOG_LEVEL);
  const runtime = runtimeOf();
  const noCrl = whyNotCrl(config.TLS_CRL, runtime);
  if (noCrl !== undefined) throw new ConfigError([noCrl]);
  const service = await buildService(config, logger);
  /**
   * A listener started on HOST and `port` (`variable`'s): if it cannot be bound, those
   * `started` before it and the service are closed, and the operator told why.
   */
  const listen = (
    variable: string,
    port: number,
    started: readonly (RunningServer | undefined)[],
    start: (settings: ListenerSettings) => Promise<RunningServer>,
  ): Promise<RunningServer> =>
    start({ host: config.HOST, port, keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS }).catch(
      async (error: unknown) => {
        for (const listener of started) await listener?.close();
        await service.close();
        throw bindProblem(variable, config.HOST, port, error);
      },
    );
  const server = await listen('PORT', config.PORT, [], (settings) =>
    startApiListener(service.app.fetch, { ...settings, tls: service.tls }, runtime),
  );
  const refusal = await whyNotServe(server, config.HOST, runtime);
  if (refusal !== undefined) {
    await server.close();
    await service.close();
    throw new ConfigError([refusal]);
  }
  // The SAR service's door (decisions §23): TLS with the service's certificate, no client
  // certificate asked, the two subject access routes behind the SAR service's token.
  const sarApp = service.sar;
  const sar =
    sarApp === undefined || config.SAR_PORT === undefined
      ? undefined
      : await listen('SAR_PORT', config.SAR_PORT, [server], (settings) =>
          startSarListener(sarApp.fetch, { ...settings, tls: service.tls }, runtime),
        );
  // Plain HTTP for the platform (health, metrics); it serves no case data and needs no credentials.
  const management = await listen('MANAGEMENT_PORT', config.MANAGEMENT_PORT, [server, sar], (settings) =>
    startManagementListener(service.management.fetch, settings),
  );
  logger.info(
    {
      url: server.url,
      runtime: `${runtime.name} ${runtime.version}`,
      tlsListener: runtime.tlsListener,
      managementUrl: management.url,
      ...(sar ? { sarUrl: sar.url } : {}),
      caseStore: service.stores.cases,
      accessStore: service.stores.access,
      auditStore: service.stores.audit,
      rateLimitStore: service.stores.rateLimit,
      credentialsIssuer: service.stores.credentials,
      identityMode: config.IDENTITY_MODE,
      ...(config.TRUSTED_GATEWAYS ? { trustedGateways: config.TRUSTED_GATEWAYS } : {}),
      bearerMode: config.BEARER_MODE,
    },
    'listening',
  );
  // Certificates reload on SIGHUP and when their files change (decisions §10).
  const certificates = service.watchCertificates(server, sar);
  const reload = () => void certificates.reloadAll();
  process.on('SIGHUP', reload);
  logger.flush();
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  certificates.stop();
  process.off('SIGHUP', reload);
  await shutDown(
    signal,
    { graceMs: config.SHUTDOWN_GRACE_MS, delayMs: signal === 'SIGTERM' ? config.SHUTDOWN_DELAY_MS : 0 },
    { logger, service, server, sar, management },
  );
  return EXIT.ok;
}

/** How long past the grace the process may take to close its stores before it exits regardless. */
const FORCED_AFTER_GRACE_MS = 1500;

/** Resolves after `ms`, or at once on a second SIGTERM or SIGINT. */
function delayUnlessSignalled(ms: number): Promise<void> {
  if (ms === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.off('SIGTERM', done);
      process.off('SIGINT', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    process.once('SIGTERM', done);
    process.once('SIGINT', done);
  });
}

/**
 * The graceful drain, one log line per phase: readiness 503 (so the load balancer stops
 * sending); on SIGTERM, `SHUTDOWN_DELAY_MS` of serving on as before, so a balancer learns
 * from its health check rather than from a refused connection (SIGINT, a person at a
 * terminal, skips it, as does a second signal); then the listener closed to new connections
 * while every open one finishes what it is serving and is closed (`Connection: close` on
 * each response, idle ones after a second), whatever is left after the grace destroyed, the
 * audit flushed and the stores closed, then the management listener. A second signal during
 * the drain ends the process at once.
 */
async function shutDown(
  signal: string,
  { graceMs, delayMs }: { readonly graceMs: number; readonly delayMs: number },
  parts: {
    logger: Logger;
    service: Service;
    server: RunningServer;
    /** The SAR service's door, drained beside the API's listener. */
    sar: RunningServer | undefined;
    management: RunningServer;
  },
): Promise<void> {
  const { logger, service, server, sar, management } = parts;
  service.beginShutdown();
  logger.info({ signal, phase: 'readiness', delayMs, graceMs }, 'shutdown: readiness is 503');
  if (delayMs > 0) {
    logger.flush();
    await delayUnlessSignalled(delayMs);
    logger.info({ phase: 'delay' }, 'shutdown: delay over, closing the listener');
  }
  // The grace bounds the drain and the records still waiting; a store that hangs past it does
  // not hold the process more than a moment longer (decisions §18).
  const graceEnds = performance.now() + graceMs;
  const stop = setTimeout(() => {
    logger.error(
      { phase: 'forced', afterMs: graceMs + FORCED_AFTER_GRACE_MS },
      'shutdown: the stores did not close within the grace; exiting',
    );
    logger.flush();
    process.exit(EXIT.failure);
  }, graceMs + FORCED_AFTER_GRACE_MS);
  stop.unref();
  const drained = Promise.all([server.drain(graceMs), sar?.drain(graceMs)]);
  logger.info({ phase: 'listener' }, 'shutdown: listener closed to new connections, draining');
  const [result, sarResult] = await drained;
  logger.info(
    { phase: 'drained', ...result, ...(sarResult ? { sar: sarResult } : {}) },
    'shutdown: every connection has ended',
  );
  // The records of answers already given, tried until the grace ends; any left, counted and logged lost.
  const lateAudit = await service.settleLateAudit(graceEnds);
  try {
    await service.close();
    logger.info({ phase: 'stores', lateAudit }, 'shutdown: audit flushed, stores closed');
  } catch (error) {
    logger.error(
      { phase: 'stores', lateAudit, err: { message: (error as Error).message } },
      'shutdown: close failed',
    );
  }
  await management.close();
  clearTimeout(stop);
  logger.info({ phase: 'stopped' }, 'shutdown: stopped');
  logger.flush();
} /**
 * A listener that could not be bound, as the operator can act on it: the variable, the
 * address, and the likely cause. Anything else is passed on as it is.
 */
function bindProblem(variable: string, host: string, port: number, error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (code === 'EADDRINUSE') {
    return new ConfigError([
      `${variable}: ${host}:${port} is in use by another process. An earlier serve may still be draining (it lets go within SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS of its signal); stop it, wait, or set ${variable} to a free port`,
    ]);
  }
  if (code === 'EACCES') {
    return new ConfigError([
      `${variable}: ${host}:${port} cannot be bound by this user (ports below 1024 need privileges); use a higher ${variable}`,
    ]);
  }
  if (code === 'EADDRNOTAVAIL') {
    return new ConfigError([
      `HOST: ${host} is no address of this machine, so ${variable} ${port} cannot be bound there`,
    ]);
  }
  return error;
}
