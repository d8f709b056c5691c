import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StsCredentialsIssuer, type StsIssuerOptions } from '../../src/adapters/sts/credentials-issuer.js';

export type FakeStsBehaviour =
  | 'success'
  | 'access-denied'
  | 'throttling'
  | 'malformed'
  | 'hang'
  /** 200, then a body that never ends, as fast as the connection takes it. */
  | 'endless'
  /** 200 with a Content-Length of 400 MiB, then a first chunk and nothing more. */
  | 'lying-length';

export interface RecordedStsCall {
  readonly headers: IncomingHttpHeaders;
  readonly params: URLSearchParams;
}

export const FAKE_CREDENTIALS = {
  AccessKeyId: 'ASIAFAKEFAKEFAKE1234',
  SecretAccessKey: 'fakeSecret/AbCdEfGhIjKlMnOpQrStUvWxYz0123456',
  SessionToken: 'FwoGZXIvYXdzEFAKE//////////sessiontoken+with/odd=chars',
  Expiration: '2026-11-22T13:34:41Z',
};
export const SECRET_ACCOUNT = '123456789012';

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;

const successBody = (sessionName: string) =>
  xml(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::${SECRET_ACCOUNT}:assumed-role/queue-reader/${sessionName}</Arn>
      <AssumedRoleId>AROAFAKEFAKEFAKE:${sessionName}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${FAKE_CREDENTIALS.AccessKeyId}</AccessKeyId>
      <SecretAccessKey>${FAKE_CREDENTIALS.SecretAccessKey}</SecretAccessKey>
      <SessionToken>${FAKE_CREDENTIALS.SessionToken}</SessionToken>
      <Expiration>${FAKE_CREDENTIALS.Expiration}</Expiration>
    </Credentials>
    <PackedPolicySize>7</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`);

const errorBody = (code: string, message: string) =>
  xml(`<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error>
  <RequestId>4f0e2ad4-0000-0000-0000-000000000000</RequestId>
</ErrorResponse>`);

/**
 * A fake AWS STS on loopback, speaking the Query protocol: it records each call's headers and
 * form parameters, refuses a request without a SigV4 Authorization header as STS would, and
 * answers as told.
 */
export class FakeSts {
  readonly calls: RecordedStsCall[] = [];
  behaviour: FakeStsBehaviour = 'success';
  /** Bytes of body written by the last 'endless' or 'lying-length' answer before its connection closed. */
  bodyBytesWritten = 0;
  /** Resolves when the last 'endless' or 'lying-length' answer's connection has closed. */
  answerClosed: Promise<void> = Promise.resolve();
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const params = new URLSearchParams(body);
        this.calls.push({ headers: req.headers, params });
        const send = (status: number, text: string) => {
          res.writeHead(status, { 'content-type': 'text/xml' });
          res.end(text);
        };
        if (
          !/^AWS4-HMAC-SHA256 Credential=\S+, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/.test(
            req.headers.authorization ?? '',
          )
        ) {
          send(403, errorBody('MissingAuthenticationToken', 'Request is missing Authentication Token'));
          return;
        }
        switch (this.behaviour) {
          case 'success':
            send(200, successBody(params.get('RoleSessionName') ?? ''));
            return;
          case 'access-denied':
            send(
              403,
              errorBody(
                'AccessDenied',
                `User: arn:aws:iam::${SECRET_ACCOUNT}:user/case-read is not authorized to perform: sts:AssumeRole on resource: ${params.get('RoleArn')}`,
              ),
            );
            return;
          case 'throttling':
            send(400, errorBody('Throttling', `Rate exceeded for account ${SECRET_ACCOUNT}`));
            return;
          case 'malformed':
            send(200, '<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIA');
            return;
          case 'hang':
            return; // never answers
          case 'endless':
          case 'lying-length':
            this.streamBody(res, this.behaviour);
            return;
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private streamBody(res: import('node:http').ServerResponse, how: 'endless' | 'lying-length'): void {
    this.bodyBytesWritten = 0;
    const chunk = Buffer.alloc(64 * 1024, '<Padding>x</Padding>');
    this.answerClosed = new Promise((resolve) => res.once('close', () => resolve()));
    res.writeHead(200, {
      'content-type': 'text/xml',
      ...(how === 'lying-length' ? { 'content-length': String(400 * 1024 * 1024) } : {}),
    });
    const more = () => {
      while (!res.destroyed) {
        this.bodyBytesWritten += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', more);
          return;
        }
      }
    };
    if (how === 'endless') more();
    else {
      this.bodyBytesWritten = chunk.length;
      res.write(chunk);
    }
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** The real STS adapter pointed at a fake STS: static test credentials, one attempt, a short timeout. */
export function issuerFor(endpoint: string, overrides: Partial<StsIssuerOptions> = {}): StsCredentialsIssuer {
  return new StsCredentialsIssuer({
    region: 'eu-west-2',
    endpoint,
    timeoutMs: 400,
    maxAttempts: 1,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    ...overrides,
  });
}
