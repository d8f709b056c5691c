import { Readable } from 'node:stream';
import { ACMPCAClient } from '@aws-sdk/client-acm-pca';
import { STSClient } from '@aws-sdk/client-sts';
import { describe, expect, it } from 'vitest';
import {
  AwsResponseTooLarge,
  boundResponse,
  createAwsClient,
} from '../../../src/adapters/shared/aws-client.js';

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
