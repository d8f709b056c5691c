/**
 * A certificate serial number as the service compares it: upper-case hexadecimal, no
 * separators, no leading zeros (`4f:1a:09` and `004F1A09` are both `4F1A09`). Every serial
 * that is stored, revoked, read from a peer certificate or stated by a gateway goes through
 * this one rule, so two spellings of one serial can never be told apart.
 */
export type CertificateSerial = string & { readonly __brand: 'CertificateSerial' };

/** RFC 5280 allows 20 octets; this leaves room for non-conforming CAs, never an unbounded string. */
const MAX_HEX_DIGITS = 64;

export const CertificateSerial = {
  /** The serial, or undefined when `raw` is not 1–64 hex digits (colons allowed between them). */
  tryParse(raw: string): CertificateSerial | undefined {
    const hex = raw.replaceAll(':', '').trim();
    // Checked before upper-casing: Unicode case mapping turns some letters into hex digits
    // ('ﬀ', U+FB00, becomes 'FF'), which are no spelling of a serial.
    if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length > MAX_HEX_DIGITS) return undefined;
    return hex.toUpperCase().replace(/^0+(?=.)/, '') as CertificateSerial;
  },

  /** The serial; throws `Error` naming the expected form. */
  parse(raw: string): CertificateSerial {
    const serial = CertificateSerial.tryParse(raw);
    if (serial === undefined) {
      throw new Error('a certificate serial is hexadecimal, e.g. 4F1A09 or 4f:1a:09');
    }
    return serial;
  },
};
