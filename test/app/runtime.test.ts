import { describe, expect, it } from 'vitest';
import { runtimeOf, whyNotCrl } from '../../src/app/composition/runtime.js';

describe('runtimeOf', () => {
  it('hands Bun the node:tls listener, whose sockets carry the peer certificate', () => {
    expect(runtimeOf({ Bun: { version: '1.4.5' }, process: { versions: { node: '24.3.0' } } })).toStrictEqual(
      {
        name: 'bun',
        version: '1.4.5',
        tlsListener: 'tls-handoff',
        checksCrl: false,
      },
    );
  });

  it('gives a CRL only to a runtime whose TLS checks one (Node)', () => {
    const deno = runtimeOf({
      Deno: { version: { deno: '2.9.5' } },
      process: { versions: { node: '24.2.0' } },
    });
    expect(whyNotCrl('crl.pem', deno)).toMatch(/^TLS_CRL: deno's TLS does not check a CRL/);
    expect(whyNotCrl(undefined, deno)).toBeUndefined();
    expect(whyNotCrl('crl.pem', runtimeOf({ process: { versions: { node: '20.20.2' } } }))).toBeUndefined();
  });

  it('keeps node:https on Deno and Node', () => {
    expect(
      runtimeOf({ Deno: { version: { deno: '2.9.6' } }, process: { versions: { node: '24.2.0' } } }),
    ).toStrictEqual({
      name: 'deno',
      version: '2.9.6',
      tlsListener: 'https',
      checksCrl: false,
    });
    expect(runtimeOf({ process: { versions: { node: '20.20.2' } } })).toStrictEqual({
      name: 'node',
      version: '20.20.2',
      tlsListener: 'https',
      checksCrl: true,
    });
  });
});
