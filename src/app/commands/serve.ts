import { startServer } from '../../adapters/node/server.js';
import { buildService, createLogger } from '../composition.js';
import { loadConfig } from '../config.js';
import { EXIT, type Io, parse, positionals } from './common.js';

export async function serve(args: string[], io: Io): Promise<number> {
  positionals(parse(args, {}).positionals, []);
  const config = loadConfig(io.env);
  const logger = createLogger(config.LOG_LEVEL);
  const service = buildService(config, logger);
  const server = await startServer(service.app.fetch, {
    host: config.HOST,
    port: config.PORT,
    tls: service.tls,
  });
  // Plain HTTP for the platform (health, metrics); it serves no case data and needs no credentials.
  const management = await startServer(service.management.fetch, {
    host: config.HOST,
    port: config.MANAGEMENT_PORT,
  });
  logger.info(
    {
      url: server.url,
      managementUrl: management.url,
      caseStore: service.stores.cases,
      accessStore: service.stores.access,
      auditStore: service.stores.audit,
      credentialsIssuer: service.stores.credentials,
      identityMode: config.IDENTITY_MODE,
      bearerMode: config.BEARER_MODE,
    },
    'listening',
  );
  logger.flush();
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      Promise.all([server.close(), management.close()])
        .catch((error: Error) => logger.error({ err: { message: error.message } }, 'close failed'))
        .finally(() => {
          service.close();
          logger.flush();
          resolve();
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return EXIT.ok;
}
