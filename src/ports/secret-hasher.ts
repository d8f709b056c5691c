/** Checks a presented API key secret against the stored hash, in constant time. */
export interface SecretHasher {
  matches(secret: string, secretHash: string): boolean;
}
