import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentialsBearer } from '../../../src/adapters/upstream/bearer.js';
import { UpstreamCaseRepository } from '../../../src/adapters/upstream/case-repository.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../../src/adapters/upstream/settings.js';
import { httpWitnessClient } from '../../../src/adapters/witness-http/witness-client.js';
import { type Ca, createCa, issueServerCertificate } from '../../../src/adapters/x509/pki.js';
import { Crn } from '../../../src/domain/crn.js';
import { fixtureCases } from '../../support/fixtures.js';

/**
 * The outgoing pools speak HTTP/1.1 even to a server that offers HTTP/2 by ALPN, said
 * (`allowH2: false`) rather than left to the default: undici 8 takes HTTP/2 when offered
 * unless told not to, and the pools are the keep-alive sockets of HTTP/1.1 the rest of the
 * upstream's tests exercise.
 */
let ca: Ca;
let server: Http2SecureServer;
let origin: string;
/** The HTTP version of each request the server took, with its path. */
const seen: string[] = [];
const X = fixtureCases().find((c) => c.crn === 'X123456');

beforeAll(async () => {
  ca = await createCa();
  const issued = await issueServerCertificate(ca);
  // Offers h2 first, and HTTP/1.1 to a client that does not take it.
  server = createSecureServer({ cert: issued.certPem, key: issued.keyPem, allowHTTP1: true }, (req, res) => {
    seen.push(`${req.httpVersion} ${req.url}`);
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    if (req.url.startsWith('/oauth2/token')) {
      res.end(JSON.stringify({ access_token: 'token', token_type: 'Bearer', expires_in: 3600 }));
    } else {
      res.end(JSON.stringify(X?.homeOfficeInterest));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://localhost:${(server.address() as AddressInfo).port}`;
}, 30_000);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe('the outgoing pools, to a server that offers HTTP/2', () => {
  it('the case store upstream and its token endpoint: HTTP/1.1', async () => {
    seen.length = 0;
    const bearer = clientCredentialsBearer({
      tokenUrl: `${origin}/oauth2/token`,
      clientId: 'case-read',
      clientSecret: 'secret',
      timeoutMs: 5000,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      tls: { ca: ca.certPem },
    });
    const repo = new UpstreamCaseRepository({
      baseUrl: origin,
      connections: 2,
      timeoutMs: 5000,
      retries: 0,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      tls: { ca: ca.certPem },
      bearer,
    });
    try {
      const read = await repo.findHomeOfficeInterest(Crn.parse('X123456'));
      expect(read?.value).toStrictEqual(X?.homeOfficeInterest);
    } finally {
      await repo.close();
      await bearer.close();
    }
    expect(seen).toStrictEqual(['1.1 /oauth2/token', '1.1 /case/X123456/home-office-interest']);
  });

  it('a witness: HTTP/1.1', async () => {
    seen.length = 0;
    const witness = httpWitnessClient({ ca: ca.certPem });
    try {
      await witness.addCheckpoint(`${origin}/witness`, 'a checkpoint\n', AbortSignal.timeout(5000));
    } finally {
      await witness.close();
    }
    expect(seen).toStrictEqual(['1.1 /witness/add-checkpoint']);
  });
});
