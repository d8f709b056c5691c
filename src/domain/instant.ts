/**
 * An instant written as `Date.toISOString` writes it (`2026-12-02T05:10:00.000Z`: UTC, to the
 * millisecond), read back; undefined for any other text, a date that does not exist included.
 * What the service writes a time as, and all it accepts where it reads one back.
 */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function instantOf(text: string): Date | undefined {
  if (!INSTANT.test(text)) return undefined;
  const at = new Date(text);
  return !Number.isNaN(at.getTime()) && at.toISOString() === text ? at : undefined;
}
