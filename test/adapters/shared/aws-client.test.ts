import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { ACMPCAClient, GetCertificateAuthorityCertificateCommand } from '@aws-sdk/client-acm-pca';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { describe, expect, it } from 'vitest';
import {
  AwsInsecureEndpoint,
  AwsResponseTooLarge,
  boundResponse,
  createAwsClient,
  guardEndpoint,
} from '../../../src/adapters/shared/aws-client.js';
import { createCa, issueServerCertificate } from '../../../src/adapters/x509/pki.js';

const settings = { region: 'eu-west-2', endpoint: 'http://127.0.0.1:9' };

describe('the bound on an AWS answer', () => {
  it('is in both clients the service builds, inside the deserializer', () => {
    const clients = [createAwsClient(STSClient, settings), createAwsClient(ACMPCAClient, settings)];
    for (const client of clients) {
      const stack = client.middlewareStack.identify();
      expect(stack).toContain('responseBound - deserialize');
      // After the deserializer in the list: nearer the HTTP handler, so it sees the raw body.
      expect(stack.indexOf('responseBound - deserialize')).toBeGreaterThan(
        stack.indexOf('deserializerMiddleware - deserialize'),
      );
      client.destroy();
    }
  });

  it('passes a body within the bound whole, and fails one past it, destroying the source', async () => {
    const within = { headers: {}, body: Readable.from([Buffer.alloc(600), Buffer.alloc(400)]) as unknown };
    boundResponse(within, 1000);
    let length = 0;
    for await (const chunk of within.body as Readable) length += (chunk as Buffer).length;
    expect(length).toBe(1000);

    const source = Readable.from([Buffer.alloc(600), Buffer.alloc(401), Buffer.alloc(10)]);
    const over = { headers: {}, body: source as unknown };
    boundResponse(over, 1000);
    const reading = (async () => {
      for await (const _ of over.body as Readable);
    })();
    await expect(reading).rejects.toThrow(AwsResponseTooLarge);
    expect(source.destroyed).toBe(true);
  });

  it('refuses a declared length over the bound before reading', () => {
    const source = Readable.from([Buffer.alloc(10)]);
    expect(() => boundResponse({ headers: { 'content-length': '1001' }, body: source }, 1000)).toThrow(
      /Content-Length 1001 over 1000; not read/,
    );
    expect(source.destroyed).toBe(true);
  });
});

describe('where an AWS client may send, and whom it trusts (decisions §20)', () => {
  /** A handler that takes the request instead of sending it. */
  const taking = () => {
    const taken: { protocol: string; hostname: string }[] = [];
    return {
      taken,
      handler: {
        handle: async (request: { protocol: string; hostname: string }) => {
          taken.push(request);
          throw Object.assign(new Error('taken, not sent'), { name: 'Taken' });
        },
        updateHttpClientConfig: () => {},
        httpHandlerConfigs: () => ({}),
      },
    };
  };
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

  it('a request to http:// off loopback is refused before it is signed or sent, by both clients', async () => {
    const settings = { region: 'eu-west-2', endpoint: 'http://aws.example.org', credentials, maxAttempts: 1 };
    const sts = createAwsClient(STSClient, settings);
    const pca = createAwsClient(ACMPCAClient, settings);
    const { taken, handler } = taking();
    for (const client of [sts, pca]) (client.config as { requestHandler: unknown }).requestHandler = handler;
    await expect(sts.send(new GetCallerIdentityCommand({}))).rejects.toThrow(AwsInsecureEndpoint);
    const arn = 'arn:aws:acm-pca:eu-west-2:000000000000:certificate-authority/x';
    await expect(
      pca.send(new GetCertificateAuthorityCertificateCommand({ CertificateAuthorityArn: arn })),
    ).rejects.toThrow(AwsInsecureEndpoint);
    expect(taken).toEqual([]);
    sts.destroy();
    pca.destroy();
  });

  it('lets https and loopback http through', () => {
    expect(() =>
      guardEndpoint({ protocol: 'https:', hostname: 'sts.eu-west-2.amazonaws.com' }),
    ).not.toThrow();
    expect(() => guardEndpoint({ protocol: 'http:', hostname: '127.0.0.1' })).not.toThrow();
    expect(() => guardEndpoint({ protocol: 'http:', hostname: '[::1]' })).not.toThrow();
    expect(() => guardEndpoint({ protocol: 'http:', hostname: 'localhost.example.org' })).toThrow(
      /^http:\/\/localhost\.example\.org: not https, not loopback; not sent$/,
    );
  });

  it('STS goes where it is told, whatever AWS_ENDPOINT_URL_STS or AWS_ENDPOINT_URL say', async () => {
    const saved = { ...process.env };
    process.env.AWS_ENDPOINT_URL_STS = 'https://from-env.example.org';
    process.env.AWS_ENDPOINT_URL = 'https://all.example.org';
    try {
      for (const endpoint of ['https://given.example.org', undefined]) {
        const client = createAwsClient(STSClient, {
          region: 'eu-west-2',
          credentials,
          maxAttempts: 1,
          ...(endpoint ? { endpoint } : {}),
        });
        const { taken, handler } = taking();
        (client.config as { requestHandler: unknown }).requestHandler = handler;
        await client.send(new GetCallerIdentityCommand({})).catch(() => undefined);
        // Given none, the regional one: the configuration found none, so the SDK looks for none.
        expect(taken.map((r) => r.hostname)).toEqual([
          endpoint ? 'given.example.org' : 'sts.eu-west-2.amazonaws.com',
        ]);
        client.destroy();
      }
    } finally {
      delete process.env.AWS_ENDPOINT_URL_STS;
      delete process.env.AWS_ENDPOINT_URL;
      Object.assign(process.env, saved);
    }
  });

  it('verifies the server whatever NODE_TLS_REJECT_UNAUTHORIZED says', async () => {
    const ca = await createCa({ commonName: 'a CA no one trusts' });
    const leaf = await issueServerCertificate(ca);
    let requests = 0;
    const server = createHttpsServer({ cert: leaf.certPem, key: leaf.keyPem }, (_request, response) => {
      requests += 1;
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    const client = createAwsClient(STSClient, {
      region: 'eu-west-2',
      endpoint: `https://127.0.0.1:${port}`,
      credentials,
      maxAttempts: 1,
    });
    try {
      const failure = await client.send(new GetCallerIdentityCommand({})).then(
        () => undefined,
        (error: unknown) => error as Error & { code?: string },
      );
      expect(failure?.code ?? failure?.message).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/i);
      expect(requests).toBe(0);
    } finally {
      client.destroy();
      if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
