import { LRUCache } from 'lru-cache';

/**
 * What a verified token is kept under: its JWS signature, the part after the last dot. A
 * signature is a few dozen characters where the token is hundreds, and hashing the key is most
 * of a lookup; two tokens never share one (each covers its own header and claims), and a hit
 * counts only when the whole token is the one kept.
 */
const signatureOf = (token: string): string => token.slice(token.lastIndexOf('.') + 1);

/**
 * Tokens verified before, each kept with its claims until it expires, `max` at the most (the
 * least recently used let go first): the main listener's bearer tokens, the SAR door's tokens.
 */
export class VerifiedTokens<C extends { readonly expiresAt: Date }> {
  /** By signature (see {@link signatureOf}), each with the whole token. */
  private readonly cache: LRUCache<string, { readonly token: string; readonly claims: C }>;

  constructor(
    max: number,
    private readonly toleranceSeconds: number,
    private readonly now: () => Date,
  ) {
    this.cache = new LRUCache<string, { readonly token: string; readonly claims: C }>({
      max,
      ttlAutopurge: false,
    });
  }

  /** Keeps `token`, just verified, with its claims until they expire (not at all once they have). */
  keep(token: string, claims: C): void {
    const ttl = claims.expiresAt.getTime() - this.now().getTime();
    if (ttl > 0) this.cache.set(signatureOf(token), { token, claims }, { ttl });
  }

  /**
   * The claims of a token kept, while it has not expired (with the clock tolerance): found by
   * its signature, and only when it is that very token, character for character.
   */
  held(token: string): C | undefined {
    const cached = this.cache.get(signatureOf(token));
    if (cached === undefined || cached.token !== token) return undefined;
    const { claims } = cached;
    return claims.expiresAt.getTime() + this.toleranceSeconds * 1000 > this.now().getTime()
      ? claims
      : undefined;
  }
}
