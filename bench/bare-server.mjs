// The baseline: bare node:https with the same mutual-TLS settings as the service, checking
// the API key and answering a constant JSON body of the same size. Run as a child process
// of bench/run.mjs, which passes its settings as JSON in argv[2]; prints its port when ready.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const settings = JSON.parse(process.argv[2]);
const body = readFileSync(settings.bodyFile);
const server = createServer(
  {
    cert: readFileSync(settings.cert),
    key: readFileSync(settings.key),
    ca: readFileSync(settings.ca),
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  },
  (req, res) => {
    if (req.headers['x-api-key'] !== settings.apiKey) {
      res.writeHead(403, { 'content-type': 'application/problem+json' });
      res.end('{"status":403}');
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': body.length,
      'cache-control': 'no-store',
    });
    res.end(body);
  },
);
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
