// The second rung of the cost ladder: bare Hono on @hono/node-server with the service's TLS
// settings, checking the API key and answering the same constant JSON. Everything between
// this and the full service is the service's own handling. Settings as for bare-server.mjs.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const settings = JSON.parse(process.argv[2]);
const body = readFileSync(settings.bodyFile, 'utf8');
const app = new Hono();
app.get('/case/:crn', (c) => {
  if (c.req.header('x-api-key') !== settings.apiKey) return c.json({ status: 403 }, 403);
  c.header('cache-control', 'no-store');
  return c.body(body, 200, { 'content-type': 'application/json' });
});
const server = serve(
  {
    fetch: app.fetch,
    hostname: '127.0.0.1',
    port: 0,
    createServer,
    serverOptions: {
      cert: readFileSync(settings.cert),
      key: readFileSync(settings.key),
      ca: readFileSync(settings.ca),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
  },
  (info) => process.stdout.write(`${JSON.stringify({ port: info.port })}\n`),
);
server.keepAliveTimeout = 5000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));
