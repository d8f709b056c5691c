import { existsSync } from 'node:fs';
import {
  createCa,
  createDevIssuer,
  issueClientCertificate,
  issueServerCertificate,
  loadCa,
} from '../composition/operator.js';
import { clientIdOf } from './arguments.js';
import { devFiles, ensureDir, readRequired, writePublicFile, writeSecretFile } from './dev-dir.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, report } from './io.js';

const days = (raw: string) => {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1)
    throw new UsageError('--days must be a whole number of days, 1 or more');
  return Number(raw);
};

/** `pki init --dir DIR`: a development CA, a server certificate for localhost, and a dev token issuer. */
export async function init(values: { dir: string; json?: boolean | undefined }, io: Io): Promise<number> {
  const files = devFiles(values.dir);
  if (existsSync(files.caCert))
    throw new CommandError(`${files.caCert} already exists; this directory is initialised`);
  ensureDir(values.dir);
  const ca = await createCa();
  const server = await issueServerCertificate(ca);
  const issuer = await createDevIssuer();
  writePublicFile(files.caCert, ca.certPem);
  writeSecretFile(files.caKey, ca.keyPem);
  writePublicFile(files.serverCert, `${server.certPem}\n${ca.certPem}`);
  writeSecretFile(files.serverKey, server.keyPem);
  writeSecretFile(files.issuerKey, `${JSON.stringify(issuer.privateJwk, null, 2)}\n`);
  writePublicFile(files.jwks, `${JSON.stringify(issuer.jwks, null, 2)}\n`);
  report(io, values.json, { dir: values.dir, ca: files.caCert, server: files.serverCert, jwks: files.jwks }, [
    `development PKI created in ${values.dir}`,
    `  CA certificate      ${files.caCert}  (TLS_CLIENT_CA, and curl --cacert)`,
    `  server certificate  ${files.serverCert}  (TLS_CERT; key: ${files.serverKey}, TLS_KEY)`,
    `  token issuer JWKS   ${files.jwks}  (BEARER_JWKS)`,
  ]);
  return EXIT.ok;
}

/** `pki client CN --dir DIR [--days N]`: a client certificate and key signed by the dev CA. */
export async function client(
  cnRaw: string,
  values: { dir: string; days: string; json?: boolean | undefined },
  io: Io,
): Promise<number> {
  const cn = clientIdOf(cnRaw);
  const validDays = days(values.days);
  const files = devFiles(values.dir);
  const hint = 'run case-read pki init --dir DIR first';
  const ca = await loadCa(readRequired(files.caCert, hint), readRequired(files.caKey, hint));
  const issued = await issueClientCertificate(ca, { commonName: cn, days: validDays });
  writePublicFile(files.clientCert(cn), issued.certPem);
  writeSecretFile(files.clientKey(cn), issued.keyPem);
  report(
    io,
    values.json,
    { cn, serialNumber: issued.serialNumber, cert: files.clientCert(cn), key: files.clientKey(cn) },
    [
      `client certificate for CN=${cn}, serial ${issued.serialNumber}`,
      `  ${files.clientCert(cn)}`,
      `  ${files.clientKey(cn)}`,
    ],
  );
  return EXIT.ok;
}
