/**
 * How every store fails: the one convention each store kind keeps, whatever its engine, and
 * which the contract suites (`test/contract/*.contract.ts`) hold every adapter to (the case
 * repository's: opening, `ping`, `close`, a missing store, an unreadable record).
 *
 * - **Cannot be opened as configured** (missing, an older schema, a bad setting): `open`
 *   rejects with a `StoreError` (`stores.ts`). The service does not start; the message names
 *   the store (any password masked) and what to do (`cases import …`, `stores migrate`, the
 *   variable at fault).
 * - **The engine fails or does not answer in time** (I/O, a lost connection, a lock, a
 *   timeout): the read rejects with `StoreUnavailableError` (`domain/errors.ts`), answered
 *   503 and logged with the store and the engine's code; `ping` rejects too, so readiness is
 *   503 and the instance leaves the rotation until the engine is back. A client may retry.
 * - **A system of record fails or answers badly** (the upstream kind): `UpstreamFailedError`
 *   or `UpstreamTimeoutError`, answered 502 or 504 as the specification says, logged with the
 *   reason, never the upstream's text.
 * - **A record is held but cannot be read back** (not the JSON, or not the shape, the store
 *   writes): the read rejects with {@link UnreadableRecordError}, answered 500 and logged
 *   naming the store and the part of the record, never its value or the crn (the request's
 *   audit record names the crn). `ping` still resolves: the store is up; one record is bad,
 *   and nothing is answered from it.
 * - **Nothing is held** for the key: `undefined` (a 404), never an error.
 *
 * `ping` resolves when the store can serve. `close` writes anything pending and releases the
 * store; a second `close` resolves and does nothing.
 */

/**
 * A record the store holds cannot be read back as the store wrote it: a column that is not
 * JSON, or JSON of another shape (an array where an object is held). Nothing is answered from
 * it. The message names the store and the part (`case store: cases.limited_access`), never
 * the value or the key, so it may be logged; the client learns only that the service failed.
 */
export class UnreadableRecordError extends Error {
  constructor(
    readonly store: string,
    readonly part: string,
    readonly reason: string,
  ) {
    super(`${store}: a record's ${part} cannot be read (${reason})`);
    this.name = 'UnreadableRecordError';
  }
}
