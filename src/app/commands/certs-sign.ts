import { existsSync, writeFileSync } from 'node:fs';
import { CertificateIssuerError } from '../../ports/certificate-issuer.js';
import { CertificateRequestError } from '../../ports/certificate-requests.js';
import {
  createCertificateIssuer,
  loadIssuerConfig,
  readClientCa,
  readRegularFileSync,
  x509CertificateRequests,
} from '../composition/operator.js';
import { clientIdOf } from './arguments.js';
import { withAccessStore } from './command-stores.js';
import { CommandError, EXIT, UsageError } from './exit.js';
import { type Io, report } from './io.js';

const MAX_DAYS = 397;

/**
 * `case-read certs sign CSR_FILE --client CN [--days N] [--out FILE]` (decisions §12): the
 * consumer's CSR (PEM or DER, made with `openssl req`), checked as `simplereenroll` checks
 * one, signed by the configured issuer for a client that exists. Only the consumer's public
 * key passes through: its private key stays with it. The certificate PEM goes to FILE (never
 * overwritten) or to stdout.
 */
export async function certsSign(
  file: string,
  values: {
    client: string;
    days?: string | undefined;
    out?: string | undefined;
    accessStore?: string | undefined;
    json?: boolean | undefined;
  },
  io: Io,
): Promise<number> {
  const client: string = clientIdOf(values.client);
  // Only what signing uses: never the server's key (TLS_KEY) or the bearer settings.
  const config = loadIssuerConfig(io.env, 'certs sign');
  const days = values.days === undefined ? config.CLIENT_CERT_DAYS : Number(values.days);
  if (!/^\d+$/.test(values.days ?? '1') || !Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
    throw new UsageError(`--days must be a whole number 1..${MAX_DAYS}`);
  }
  if (values.out !== undefined && existsSync(values.out)) {
    throw new CommandError(`${values.out} exists already; it is not overwritten`);
  }
  // A regular file (a FIFO is refused, never waited on), named as before: `FILE cannot be read (ENOENT)`.
  const bytes = readRegularFileSync('', file, (message) => new CommandError(message.trimStart())).bytes;
  const request = await x509CertificateRequests.read(new Uint8Array(bytes)).catch((error: unknown) => {
    throw error instanceof CertificateRequestError ? new CommandError(`${file}: ${error.message}`) : error;
  });
  if (request.commonName !== client) {
    throw new CommandError(`${file}: its subject is CN=${request.commonName}, not CN=${client}`);
  }
  await withAccessStore(values.accessStore, io, async (store) => {
    if (!(await store.findClient(client))) {
      throw new CommandError(`no client ${client}; add it first with case-read clients add`);
    }
  });
  const issuer = await createCertificateIssuer(config, readClientCa(config));
  if (issuer === null) {
    throw new CommandError(
      'no certificate issuer is configured: set CLIENT_CERT_ISSUER=local (with CLIENT_CA_CERT and CLIENT_CA_KEY) or acm-pca (with ACM_PCA_ARN)',
    );
  }
  const issued = await issuer
    .issue({ commonName: client, csrDer: request.der, publicKeyDer: request.publicKeyDer, days })
    .catch((error: unknown) => {
      throw error instanceof CertificateIssuerError ? new CommandError(error.message) : error;
    });
  const facts = {
    client,
    serialNumber: issued.serialNumber,
    notAfter: issued.notAfter.toISOString(),
    key: request.keyKind,
    ...(values.out ? { file: values.out } : {}),
  };
  if (values.out === undefined) {
    io.out(issued.pem.trimEnd());
    io.err(
      `issued certificate serial ${issued.serialNumber} for ${client} (${request.keyKind}), valid until ${facts.notAfter}`,
    );
    return EXIT.ok;
  }
  writeFileSync(values.out, issued.pem, { mode: 0o644, flag: 'wx' });
  report(
    io,
    values.json,
    facts,
    `issued certificate serial ${issued.serialNumber} for ${client} (${request.keyKind}), valid until ${facts.notAfter}, written to ${values.out}`,
  );
  return EXIT.ok;
}
