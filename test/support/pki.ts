import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDevIssuer, type DevIssuerKeys } from '../../src/adapters/jose/dev-issuer.js';
import { thumbprintOfPem } from '../../src/adapters/tls-listener/peer-certificate.js';
import {
  type Ca,
  createCa,
  type Issued,
  issueClientCertificate,
  issueServerCertificate,
} from '../../src/adapters/x509/pki.js';
import { createCrl } from './crl.js';

export interface ClientCredentials extends Issued {
  readonly commonName: string;
  readonly thumbprint: string;
}

/** A throwaway PKI for one test file: CA, server certificate, a foreign CA, token issuers. */
export interface TestPki {
  readonly dir: string;
  readonly ca: Ca;
  readonly otherCa: Ca;
  readonly server: Issued;
  readonly issuer: DevIssuerKeys;
  readonly jwksPath: string;
  client(
    commonName: string,
    options?: { ca?: Ca; notBefore?: Date; notAfter?: Date },
  ): Promise<ClientCredentials>;
  crl(serials: string[]): Promise<string>;
  /**
   * Writes a file into the PKI directory and returns its path: a private key readable by its
   * owner only (0600), as the service requires of a key file; anything else as umask has it.
   */
  write(name: string, content: string): string;
  cleanup(): void;
}

export async function makeTestPki(): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), 'case-read-pki-'));
  const ca = await createCa({ commonName: 'test CA' });
  const otherCa = await createCa({ commonName: 'some other CA' });
  const server = await issueServerCertificate(ca);
  const issuer = await createDevIssuer();
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content, /PRIVATE KEY-----/.test(content) ? { mode: 0o600 } : {});
    return path;
  };
  return {
    dir,
    ca,
    otherCa,
    server,
    issuer,
    jwksPath: write('jwks.json', JSON.stringify(issuer.jwks)),
    async client(commonName, options = {}) {
      const issued = await issueClientCertificate(options.ca ?? ca, {
        commonName,
        ...(options.notBefore ? { notBefore: options.notBefore } : {}),
        ...(options.notAfter ? { notAfter: options.notAfter } : {}),
      });
      return { ...issued, commonName, thumbprint: thumbprintOfPem(issued.certPem) };
    },
    crl: (serials) => createCrl(ca, serials),
    write,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
