/**
 * Freezes a value and everything reachable from it, so a cached or shared answer cannot be
 * changed by one caller for the next. Already-frozen parts are not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
