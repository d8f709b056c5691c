/** What every request context carries through the HTTP adapter. */
export interface AppEnv {
  Variables: {
    requestId: string;
  };
}

/** The structured logger the adapter writes to (pino in production, a spy in tests). */
export interface HttpLogger {
  info(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}
