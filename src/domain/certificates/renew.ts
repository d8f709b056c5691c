import type { AccessDirectory } from '../../ports/access-directory.js';
import type { CertificateIssuer, IssuedClientCertificate } from '../../ports/certificate-issuer.js';
import type { CertificateRequests } from '../../ports/certificate-requests.js';
import type { Deadline } from '../../ports/deadline.js';
import { requirePermission } from '../access/admit.js';
import type { Caller } from '../access/model.js';
import {
  AlreadyRenewedError,
  CertificateRequestRefusedError,
  RenewalNotConfiguredError,
  RenewTooEarlyError,
} from '../errors.js';

const DAY = 86_400_000;

/** `CLIENT_CERT_DAYS` and `CLIENT_CERT_RENEW_WITHIN_DAYS` when not set (decisions §12). */
export const DEFAULT_CLIENT_CERT_DAYS = 90;
export const DEFAULT_RENEW_WITHIN_DAYS = 30;

export interface RenewalDeps {
  readonly requests: Pick<CertificateRequests, 'read'>;
  /** null: no issuer is configured. */
  readonly issuer: CertificateIssuer | null;
  readonly directory: Pick<AccessDirectory, 'claimRenewal' | 'completeRenewal'>;
  /** `CLIENT_CERT_DAYS`: the validity of what is issued. */
  readonly days: number;
  /** `CLIENT_CERT_RENEW_WITHIN_DAYS`: how long before its end a certificate may be renewed. */
  readonly renewWithinDays: number;
  readonly now: () => Date;
}

/** Whether `notAfter` is inside the renewal window at `now`. */
export const inRenewalWindow = (notAfter: Date, now: Date, withinDays: number): boolean =>
  notAfter.getTime() - now.getTime() <= withinDays * DAY;

/**
 * Operation `renewCertificate` (EST simplereenroll, decisions §12): a new certificate for the
 * key in the consumer's CSR, issued to the client the presented certificate names, once per
 * presented certificate, inside its renewal window. Every check fails closed, nothing issued:
 * the permission (403), an issuer (501), the CSR itself (400/413), its subject exactly the
 * presented certificate's CN (400), the window (409), the certificate not renewed before
 * (409). The claim on the one renewal is taken before issuing and given back if issuing
 * fails, so two requests at once cannot both renew.
 */
export async function renewClientCertificate(
  deps: RenewalDeps,
  caller: Pick<Caller, 'client' | 'certificate' | 'permissions'>,
  csr: Uint8Array,
  deadline?: Deadline,
): Promise<IssuedClientCertificate> {
  requirePermission(caller, 'renewCertificate');
  if (deps.issuer === null) throw new RenewalNotConfiguredError();
  const checked = await deps.requests.read(csr);
  const presented = caller.certificate;
  if (checked.commonName !== presented.commonName) {
    throw new CertificateRequestRefusedError(
      'the subject must be CN= the CN of the certificate you present, and nothing else',
    );
  }
  const now = deps.now();
  if (presented.notAfter === null || !inRenewalWindow(presented.notAfter, now, deps.renewWithinDays)) {
    throw new RenewTooEarlyError(presented.notAfter, deps.renewWithinDays);
  }
  const claimed = await deps.directory.claimRenewal({
    serialNumber: presented.serialNumber,
    clientId: caller.client.id,
    at: now,
  });
  if (!claimed) throw new AlreadyRenewedError();
  let issued: IssuedClientCertificate;
  try {
    issued = await deps.issuer.issue(
      {
        commonName: checked.commonName,
        csrDer: checked.der,
        publicKeyDer: checked.publicKeyDer,
        days: deps.days,
      },
      deadline,
    );
  } catch (error) {
    await deps.directory.completeRenewal(presented.serialNumber, null).catch(() => {});
    throw error;
  }
  if (deadline?.passed) {
    // Issued, but too late to be delivered: the request was answered 503 at its deadline.
    // The claim is given back, so the consumer can renew again rather than be locked out
    // by a certificate it never received.
    await deps.directory.completeRenewal(presented.serialNumber, null);
    throw new CertificateRequestRefusedError(
      'the certificate could not be delivered before the deadline; renew again',
    );
  }
  await deps.directory.completeRenewal(presented.serialNumber, issued.serialNumber);
  return issued;
}
