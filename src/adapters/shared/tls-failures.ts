/**
 * Node's error codes for a peer certificate refused (an unknown CA, a wrong host name, an
 * expired or not yet valid one): a configuration to fix, not an engine that is down. The
 * store kinds tell the two apart at start (decisions §17).
 */
export function isCertificateFailure(code: string | undefined): boolean {
  if (code === undefined) return false;
  return (
    code === 'ERR_TLS_CERT_ALTNAME_INVALID' ||
    /^(UNABLE_TO_(GET_ISSUER_CERT|GET_ISSUER_CERT_LOCALLY|VERIFY_LEAF_SIGNATURE)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_[A-Z_]+|HOSTNAME_MISMATCH)$/.test(
      code,
    )
  );
}
