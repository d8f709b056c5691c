import { createPublicKey, type KeyObject, randomUUID, X509Certificate } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ACMPCAClient,
  type ACMPCAClientConfig,
  DescribeCertificateAuthorityCommand,
  GetCertificateAuthorityCertificateCommand,
  GetCertificateCommand,
  IssueCertificateCommand,
  type SigningAlgorithm,
} from '@aws-sdk/client-acm-pca';
import { CertificateSerial } from '../../domain/access/certificate-serial.js';
import {
  type CertificateIssuer,
  CertificateIssuerError,
  type ClientCertificateOrder,
  type IssuedClientCertificate,
} from '../../ports/certificate-issuer.js';
import type { Deadline } from '../../ports/deadline.js';
import {
  type AwsClientSettings,
  awsErrorLabel,
  createAwsClient,
  isAwsTimeout,
} from '../shared/aws-client.js';
import { type CallBudget, callBudget } from '../shared/call-budget.js';

/** What the issuer is built with. Its client may retry a call: IssueCertificate is idempotent by its token. */
export interface AcmPcaIssuerOptions extends AwsClientSettings<ACMPCAClientConfig['credentials']> {
  /** The issuing private CA: `arn:<partition>:acm-pca:<region>:<account>:certificate-authority/<id>`. */
  readonly arn: string;
  /** Bounds each operation (`issue`, `caCertificates`) whole: its calls, the SDK's retries and the polling. */
  readonly timeoutMs: number;
}

const ARN = /^arn:(aws[a-z-]*):acm-pca:[a-z0-9-]+:\d{12}:certificate-authority\/[A-Za-z0-9-]+$/;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
/** GetCertificate back-off while AWS answers RequestInProgressException. */
const FIRST_POLL_MS = 50;
const MAX_POLL_MS = 500;

/** The CA's signing algorithm for its key (the template leaves the choice to the caller). */
function signingAlgorithmFor(keyAlgorithm: string | undefined): SigningAlgorithm | undefined {
  if (keyAlgorithm === 'EC_prime256v1') return 'SHA256WITHECDSA';
  if (keyAlgorithm === 'EC_secp384r1') return 'SHA384WITHECDSA';
  if (keyAlgorithm?.startsWith('RSA_')) return 'SHA256WITHRSA';
  return undefined; // SM2, ML-DSA, … : not a key this adapter issues with
}

/** The PEM blocks of `kind` in `text`, each ending in a newline. */
function pemBlocks(text: string, kind = 'CERTIFICATE'): string[] {
  const block = new RegExp(`-----BEGIN ${kind}-----\\r?\\n[A-Za-z0-9+/=\\r\\n]+-----END ${kind}-----`, 'g');
  return (text.match(block) ?? []).map((pem) => `${pem.replaceAll('\r\n', '\n')}\n`);
}

function pem(der: Uint8Array, kind: string): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${kind}-----\n${lines.join('\n')}\n-----END ${kind}-----\n`;
}

function spki(key: KeyObject): Buffer {
  return key.export({ type: 'spki', format: 'der' });
}

/**
 * Client certificates from AWS Private CA: `IssueCertificate` with the
 * `EndEntityClientAuthCertificate/V1` template (clientAuth, digitalSignature, not a CA, the
 * CSR's subject) and the order's validity in days, then `GetCertificate` until AWS has
 * signed it. The certificate that comes back is checked before it is handed on: its key
 * must be the order's, its subject `CN=<commonName>` and nothing else, clientAuth, not a CA.
 * Anything else is refused (fail closed). The CA's key stays in AWS.
 */
export class AcmPcaCertificateIssuer implements CertificateIssuer {
  private readonly client: ACMPCAClient;
  private readonly templateArn: string;
  private signingAlgorithm: SigningAlgorithm | undefined;
  private caChain: readonly string[] | undefined;

  constructor(private readonly options: AcmPcaIssuerOptions) {
    const partition = ARN.exec(options.arn)?.[1];
    // The ARN names the account: the message does not repeat it.
    if (partition === undefined) throw new Error('the ACM PCA CA ARN is not a certificate-authority ARN');
    this.templateArn = `arn:${partition}:acm-pca:::template/EndEntityClientAuthCertificate/V1`;
    this.client = createAwsClient(ACMPCAClient, options);
  }

  async issue(order: ClientCertificateOrder, deadline?: Deadline): Promise<IssuedClientCertificate> {
    const budget = callBudget(this.options.timeoutMs, deadline);
    const { signal } = budget;
    try {
      const signingAlgorithm = await this.caSigningAlgorithm(signal);
      const command = new IssueCertificateCommand({
        CertificateAuthorityArn: this.options.arn,
        Csr: Buffer.from(pem(order.csrDer, 'CERTIFICATE REQUEST'), 'ascii'),
        TemplateArn: this.templateArn,
        SigningAlgorithm: signingAlgorithm,
        Validity: { Type: 'DAYS', Value: order.days },
        // One token for the SDK's retries of this call: AWS issues once. 36 characters.
        IdempotencyToken: randomUUID(),
      });
      const issued = await this.traced('IssueCertificate', () =>
        this.client.send(command, { abortSignal: signal }),
      );
      if (!issued.CertificateArn) throw new CertificateIssuerError('incomplete-response');
      const certificate = await this.awaitCertificate(issued.CertificateArn, signal);
      return checked(certificate, order);
    } catch (error) {
      throw this.failure(error, budget);
    } finally {
      budget.end();
    }
  }

  async caCertificates(deadline?: Deadline): Promise<readonly string[]> {
    if (this.caChain) return this.caChain;
    const budget = callBudget(this.options.timeoutMs, deadline);
    const { signal } = budget;
    try {
      const command = new GetCertificateAuthorityCertificateCommand({
        CertificateAuthorityArn: this.options.arn,
      });
      const output = await this.traced('GetCertificateAuthorityCertificate', () =>
        this.client.send(command, { abortSignal: signal }),
      );
      const own = pemBlocks(output.Certificate ?? '');
      if (own.length !== 1) throw new CertificateIssuerError('incomplete-response');
      const chain = pemBlocks(output.CertificateChain ?? '');
      for (const certificate of [...own, ...chain]) readable(certificate);
      this.caChain = Object.freeze([...own, ...chain]);
      return this.caChain;
    } catch (error) {
      throw this.failure(error, budget);
    } finally {
      budget.end();
    }
  }

  close(): void {
    this.client.destroy();
  }

  /** Its own timeout or the request's deadline (`budget`), or what AWS said. */
  private failure(error: unknown, budget: CallBudget): CertificateIssuerError {
    if (error instanceof CertificateIssuerError) return error;
    if (budget.signal.aborted || isAwsTimeout(error)) {
      return new CertificateIssuerError(budget.byDeadline ? 'deadline' : 'timeout', true);
    }
    return new CertificateIssuerError(awsErrorLabel(error));
  }

  /** The signing algorithm for the CA's key, asked once (a failed answer is asked again next time). */
  private async caSigningAlgorithm(signal: AbortSignal): Promise<SigningAlgorithm> {
    if (this.signingAlgorithm) return this.signingAlgorithm;
    const command = new DescribeCertificateAuthorityCommand({ CertificateAuthorityArn: this.options.arn });
    const output = await this.traced('DescribeCertificateAuthority', () =>
      this.client.send(command, { abortSignal: signal }),
    );
    const keyAlgorithm = output.CertificateAuthority?.CertificateAuthorityConfiguration?.KeyAlgorithm;
    const algorithm = signingAlgorithmFor(keyAlgorithm);
    if (!algorithm) throw new CertificateIssuerError('unsupported-ca-key');
    this.signingAlgorithm = algorithm;
    return algorithm;
  }

  /** GetCertificate until AWS stops answering RequestInProgressException (or the signal ends it). */
  private async awaitCertificate(certificateArn: string, signal: AbortSignal): Promise<string> {
    const input = { CertificateAuthorityArn: this.options.arn, CertificateArn: certificateArn };
    let pause = FIRST_POLL_MS;
    for (;;) {
      // A command per send: a command's middleware is resolved when it is sent.
      const command = new GetCertificateCommand(input);
      try {
        const output = await this.traced('GetCertificate', () =>
          this.client.send(command, { abortSignal: signal }),
        );
        if (!output.Certificate) throw new CertificateIssuerError('incomplete-response');
        return output.Certificate;
      } catch (error) {
        if ((error as { name?: unknown })?.name !== 'RequestInProgressException') throw error;
      }
      await sleep(pause, undefined, { signal });
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  /** One call, in a client span when tracing is on. */
  private traced<T>(operation: string, call: () => Promise<T>): Promise<T> {
    const tracing = this.options.tracing;
    return tracing
      ? tracing.outgoing(
          `ACM-PCA ${operation}`,
          { 'rpc.system': 'aws-api', 'rpc.service': 'ACMPrivateCA', 'rpc.method': operation },
          call,
        )
      : call();
  }
}

function readable(certificatePem: string): X509Certificate {
  try {
    return new X509Certificate(certificatePem);
  } catch {
    throw new CertificateIssuerError('unexpected-certificate');
  }
}

/** The certificate AWS returned, if it is what was ordered; else refused. */
function checked(certificatePem: string, order: ClientCertificateOrder): IssuedClientCertificate {
  const blocks = pemBlocks(certificatePem);
  if (blocks.length !== 1 || blocks[0] === undefined)
    throw new CertificateIssuerError('unexpected-certificate');
  const pemText = blocks[0];
  const certificate = readable(pemText);
  let ordered: Buffer;
  try {
    ordered = spki(createPublicKey({ key: Buffer.from(order.publicKeyDer), format: 'der', type: 'spki' }));
  } catch {
    throw new CertificateIssuerError('unexpected-certificate');
  }
  const notAfter = new Date(certificate.validTo);
  const serialNumber = CertificateSerial.tryParse(certificate.serialNumber);
  if (
    !spki(certificate.publicKey).equals(ordered) ||
    certificate.subject !== `CN=${order.commonName}` ||
    certificate.ca ||
    !(certificate.keyUsage ?? []).includes(CLIENT_AUTH) ||
    Number.isNaN(notAfter.getTime()) ||
    serialNumber === undefined
  ) {
    throw new CertificateIssuerError('unexpected-certificate');
  }
  return { pem: pemText, serialNumber, notAfter };
}
