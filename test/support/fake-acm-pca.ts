import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import {
  AcmPcaCertificateIssuer,
  type AcmPcaIssuerOptions,
} from '../../src/adapters/acm-pca/certificate-issuer.js';
import { type Ca, createCa } from '../../src/adapters/x509/pki.js';

/**
 * - `success`: issues as AWS would (GetCertificate first answers RequestInProgressException);
 * - `access-denied`: every call is refused with AccessDeniedException, naming an account;
 * - `hang`: never answers;
 * - `wrong-key`: signs a public key other than the CSR's;
 * - `wrong-name`: signs the CSR's key under another CN.
 */
export type FakeAcmPcaBehaviour = 'success' | 'access-denied' | 'hang' | 'wrong-key' | 'wrong-name';

export interface RecordedAcmPcaCall {
  /** `IssueCertificate`, from `X-Amz-Target: ACMPrivateCA.IssueCertificate`. */
  readonly operation: string;
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
}

/** The account the access-denied message names: it must never reach a label or a log. */
export const SECRET_ACCOUNT = '123456789012';
export const FAKE_CA_ARN =
  'arn:aws:acm-pca:eu-west-2:000000000000:certificate-authority/11111111-2222-3333-4444-555555555555';

const JSON_TYPE = 'application/x-amz-json-1.1';
const SIGV4 = /^AWS4-HMAC-SHA256 Credential=\S+, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/;
const DAY = 86_400_000;
const P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;

class AwsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

interface IssuedRecord {
  readonly pem: string;
  polls: number;
}

/**
 * A stand-in for AWS Private CA on loopback, speaking the AWS JSON 1.1 protocol
 * (`X-Amz-Target: ACMPrivateCA.<Operation>`). It holds a real test CA (ECDSA P-256), signs a
 * real client certificate for each CSR, refuses a request without a SigV4 Authorization
 * header as AWS would, records every call, and answers as told.
 */
export class FakeAcmPca {
  readonly calls: RecordedAcmPcaCall[] = [];
  behaviour: FakeAcmPcaBehaviour = 'success';
  /** How many GetCertificate calls for each certificate answer RequestInProgressException first. */
  inProgressAnswers = 1;
  /** The one CA it holds, by ARN (another ARN is ResourceNotFoundException). */
  caArn = FAKE_CA_ARN;
  private server: Server | undefined;
  private caHeld: Ca | undefined;
  private readonly issued = new Map<string, IssuedRecord>();

  get ca(): Ca {
    if (!this.caHeld) throw new Error('the fake ACM PCA is not started');
    return this.caHeld;
  }

  /** Starts it, holding `ca` (e.g. a development CA the service's TLS_CLIENT_CA trusts) or a new one. */
  async start(ca?: Ca): Promise<string> {
    this.caHeld = ca ?? (await createCa({ commonName: 'fake ACM PCA test CA' }));
    this.server = createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        text += chunk;
      });
      req.on('end', () => {
        const target = String(req.headers['x-amz-target'] ?? '');
        const operation = target.startsWith('ACMPrivateCA.') ? target.slice('ACMPrivateCA.'.length) : target;
        let body: Record<string, unknown> = {};
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          // recorded empty; answered below
        }
        this.calls.push({ operation, body, headers: req.headers });
        if (this.behaviour === 'hang') return; // never answers
        this.answer(operation, body, req.headers).then(
          (output) => {
            res.writeHead(200, { 'content-type': JSON_TYPE });
            res.end(JSON.stringify(output));
          },
          (error: unknown) => {
            const e = error instanceof AwsError ? error : new AwsError('InternalFailure', String(error), 500);
            res.writeHead(e.status, { 'content-type': JSON_TYPE, 'x-amzn-errortype': e.type });
            res.end(JSON.stringify({ __type: e.type, message: e.message }));
          },
        );
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** The recorded calls of one operation. */
  callsOf(operation: string): RecordedAcmPcaCall[] {
    return this.calls.filter((call) => call.operation === operation);
  }

  private async answer(
    operation: string,
    body: Record<string, unknown>,
    headers: IncomingHttpHeaders,
  ): Promise<Record<string, unknown>> {
    if (!SIGV4.test(headers.authorization ?? '')) {
      throw new AwsError('MissingAuthenticationTokenException', 'Missing Authentication Token', 403);
    }
    if (!String(headers['content-type'] ?? '').startsWith(JSON_TYPE)) {
      throw new AwsError('UnknownOperationException', 'Unsupported content type', 400);
    }
    if (this.behaviour === 'access-denied') {
      throw new AwsError(
        'AccessDeniedException',
        `User: arn:aws:sts::${SECRET_ACCOUNT}:assumed-role/case-read/i-0abc is not authorized to perform: acm-pca:${operation} on resource: ${FAKE_CA_ARN.replace('000000000000', SECRET_ACCOUNT)}`,
      );
    }
    if (body.CertificateAuthorityArn !== this.caArn) {
      throw new AwsError(
        'ResourceNotFoundException',
        `Could not find certificate authority ${String(body.CertificateAuthorityArn)}`,
      );
    }
    switch (operation) {
      case 'DescribeCertificateAuthority':
        return this.describe();
      case 'GetCertificateAuthorityCertificate':
        return { Certificate: this.ca.certPem.trim() };
      case 'IssueCertificate':
        return this.issue(body);
      case 'GetCertificate':
        return this.getCertificate(body);
      default:
        throw new AwsError('UnknownOperationException', `Unknown operation ${operation}`);
    }
  }

  private describe(): Record<string, unknown> {
    const now = Date.now() / 1000;
    return {
      CertificateAuthority: {
        Arn: this.caArn,
        OwnerAccount: '000000000000',
        CreatedAt: now - 86_400,
        Status: 'ACTIVE',
        Type: 'ROOT',
        UsageMode: 'GENERAL_PURPOSE',
        KeyStorageSecurityStandard: 'FIPS_140_2_LEVEL_3_OR_HIGHER',
        NotBefore: this.ca.certificate.notBefore.getTime() / 1000,
        NotAfter: this.ca.certificate.notAfter.getTime() / 1000,
        CertificateAuthorityConfiguration: {
          KeyAlgorithm: 'EC_prime256v1',
          SigningAlgorithm: 'SHA256WITHECDSA',
          Subject: { CommonName: 'fake ACM PCA test CA', Organization: 'case-read-service (development)' },
        },
      },
    };
  }

  private async issue(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (body.SigningAlgorithm !== 'SHA256WITHECDSA') {
      throw new AwsError('InvalidArgsException', 'The signing algorithm does not match the CA key');
    }
    const token = body.IdempotencyToken;
    if (token !== undefined && (typeof token !== 'string' || token.length < 1 || token.length > 36)) {
      throw new AwsError('ValidationException', 'IdempotencyToken: 1 to 36 characters');
    }
    const validity = body.Validity as { Type?: unknown; Value?: unknown } | undefined;
    if (validity?.Type !== 'DAYS' || typeof validity.Value !== 'number' || validity.Value < 1) {
      throw new AwsError('ValidationException', 'Validity: DAYS and a positive value expected here');
    }
    let csr: x509.Pkcs10CertificateRequest;
    try {
      csr = new x509.Pkcs10CertificateRequest(Buffer.from(String(body.Csr), 'base64').toString('ascii'));
    } catch {
      throw new AwsError('MalformedCSRException', 'The certificate signing request is invalid');
    }
    const commonName = csr.subjectName.getField('CN')[0];
    if (!commonName) throw new AwsError('MalformedCSRException', 'The CSR has no common name');
    const publicKey =
      this.behaviour === 'wrong-key'
        ? ((await webcrypto.subtle.generateKey(P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair)
            .publicKey
        : csr.publicKey;
    // 16 random bytes whose first is below 0x10: a serial whose hex starts with a zero.
    const serial = randomBytes(16);
    serial[0] = ((serial[0] ?? 0) & 0x0f) | 0x01;
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: serial.toString('hex'),
      subject: `CN=${this.behaviour === 'wrong-name' ? 'someone-else' : commonName}`,
      issuer: this.ca.certificate.subject,
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + validity.Value * DAY),
      publicKey,
      signingKey: this.ca.privateKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
        await x509.AuthorityKeyIdentifierExtension.create(this.ca.certificate, false),
      ],
    });
    const arn = `${this.caArn}/certificate/${randomBytes(16).toString('hex')}`;
    this.issued.set(arn, { pem: certificate.toString('pem'), polls: 0 });
    return { CertificateArn: arn };
  }

  private getCertificate(body: Record<string, unknown>): Record<string, unknown> {
    const record = this.issued.get(String(body.CertificateArn));
    if (!record)
      throw new AwsError(
        'ResourceNotFoundException',
        `Could not find certificate ${String(body.CertificateArn)}`,
      );
    record.polls += 1;
    if (record.polls <= this.inProgressAnswers) {
      throw new AwsError(
        'RequestInProgressException',
        `The request to issue certificate ${String(body.CertificateArn)} is still in progress`,
      );
    }
    return { Certificate: record.pem, CertificateChain: this.ca.certPem };
  }
}

/** The real ACM PCA adapter pointed at the stand-in: static test credentials, one attempt, a short timeout. */
export function acmPcaIssuerFor(
  endpoint: string,
  overrides: Partial<AcmPcaIssuerOptions> = {},
): AcmPcaCertificateIssuer {
  return new AcmPcaCertificateIssuer({
    arn: FAKE_CA_ARN,
    region: 'eu-west-2',
    endpoint,
    timeoutMs: 400,
    maxAttempts: 1,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
    ...overrides,
  });
}
