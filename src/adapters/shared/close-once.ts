/**
 * A store's `close` that runs once: a later call gets the first call's promise and does
 * nothing more (the store error convention, src/ports/store-errors.ts), so a shutdown that
 * closes a store twice cannot fail on an engine's "already closed".
 */
export function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}
