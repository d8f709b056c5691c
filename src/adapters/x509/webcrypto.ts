import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * @peculiar/x509 on this runtime's WebCrypto, set up once for every module of this folder
 * that makes or reads certificates: they import `x509` from here.
 */
x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };

/**
 * A random positive serial of 16 bytes: 126 random bits (the first bit clear so DER keeps it
 * positive, and the first byte's last bit set so it is never shorter than 16 bytes).
 */
export function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = ((bytes[0] ?? 1) & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}
