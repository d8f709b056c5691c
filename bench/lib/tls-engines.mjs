// A PostgreSQL cluster and a redis-server of the bench's own that speak both plaintext and TLS
// on loopback, for the tls-stores scenario: the same engines reached both ways, so that the
// only difference between the two services measured is TLS. Certificates are made with
// openssl; the cluster runs as the `postgres` user (initdb refuses root), so the bench runs as
// root, as CI does. stop() kills both and removes the directory.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const run = (command, args, options = {}) => execFileSync(command, args, { stdio: 'pipe', ...options });

/** The highest PostgreSQL version's binaries (Debian keeps each under /usr/lib/postgresql/N/bin). */
function postgresBin() {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql');
  return join('/usr/lib/postgresql', versions[0], 'bin');
}

/** A CA and a server certificate for localhost and 127.0.0.1, P-256, made by openssl in `dir`. */
function makeCertificates(dir) {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  run(
    'openssl',
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=bench stores CA',
    ],
    { cwd: dir },
  );
  run('openssl', ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], {
    cwd: dir,
  });
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  run(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    ],
    { cwd: dir },
  );
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

async function startPostgres(dir, files) {
  const bin = postgresBin();
  const data = join(dir, 'pg');
  mkdirSync(data, { mode: 0o700 });
  const pgUser = Number(run('id', ['-u', 'postgres']).toString().trim());
  const pgGroup = Number(run('id', ['-g', 'postgres']).toString().trim());
  chownSync(data, pgUser, pgGroup);
  const asPostgres = (command, args) =>
    run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { cwd: tmpdir() });
  asPostgres('initdb', [
    '-D',
    data,
    '--username=root',
    '--auth=trust',
    '--no-sync',
    '--locale=C',
    '-E',
    'UTF8',
  ]);
  for (const [name, from] of [
    ['server.pem', files.cert],
    ['server.key', files.key],
  ]) {
    copyFileSync(from, join(data, name));
    chownSync(join(data, name), pgUser, pgGroup);
    chmodSync(join(data, name), 0o600);
  }
  const port = await freePort();
  writeFileSync(
    join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${data}'`,
      'ssl = on',
      "ssl_cert_file = 'server.pem'",
      "ssl_key_file = 'server.key'",
      'fsync = off',
      'synchronous_commit = off',
      'max_connections = 100',
    ].join('\n'),
    { flag: 'a' },
  );
  // Both ways on loopback: `host` takes either; the service asks for TLS by its URL.
  writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
  asPostgres('pg_ctl', ['-D', data, '-l', join(data, 'log'), '-w', '-t', '30', 'start']);
  run(join(bin, 'createdb'), ['-h', data, '-p', String(port), '-U', 'root', 'bench']);
  return {
    url: `postgres://root@127.0.0.1:${port}/bench`,
    stop: () => {
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // Already stopped.
      }
    },
  };
}

async function startRedis(files) {
  const [port, tlsPort] = [await freePort(), await freePort()];
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--tls-port',
      String(tlsPort),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--tls-cert-file',
      files.cert,
      '--tls-key-file',
      files.key,
      '--tls-ca-cert-file',
      files.ca,
      '--tls-auth-clients',
      'no',
    ],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      if (
        run('redis-cli', ['-p', String(port), 'ping'])
          .toString()
          .trim() === 'PONG'
      )
        break;
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    tlsUrl: `rediss://127.0.0.1:${tlsPort}`,
    stop: () => child.kill('SIGKILL'),
  };
}

/** Both engines, both ways; `stop()` stops them and removes their directory. */
export async function startTlsEngines() {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-bench-tls-'));
  // The cluster's directory below it is the postgres user's: it must be able to reach it.
  chmodSync(dir, 0o755);
  const files = makeCertificates(dir);
  const postgres = await startPostgres(dir, files);
  const redis = await startRedis(files).catch((error) => {
    postgres.stop();
    throw error;
  });
  return {
    postgresUrl: postgres.url,
    /** libpq's parameters for verify-full against the bench's CA. */
    postgresTls: `sslmode=verify-full&sslrootcert=${files.ca}`,
    redisUrl: redis.url,
    redisTlsUrl: redis.tlsUrl,
    ca: files.ca,
    /** How many TLS connections the services hold to each engine (each made one handshake). */
    async tlsConnections() {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE s.ssl AND a.application_name LIKE 'case-read %'",
      );
      await client.end();
      // Redis lists each client; the service's TLS ones are the only clients on the TLS port's side.
      const clients = run('redis-cli', ['-p', redis.url.split(':').at(-1), 'client', 'list']).toString();
      const redisTls = clients
        .split('\n')
        .filter((line) => line.includes(`laddr=127.0.0.1:${redis.tlsUrl.split(':').at(-1)}`)).length;
      return { postgres: rows[0].n, redis: redisTls };
    },
    stop() {
      redis.stop();
      postgres.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
