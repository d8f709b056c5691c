import { UnreadableRecordError } from '../../ports/store-errors.js';

/** The shape a stored JSON part of a record has when the store wrote it. */
export type StoredShape = 'an object' | 'an object or null' | 'an array';

const fits = (value: unknown, shape: StoredShape): boolean =>
  shape === 'an array'
    ? Array.isArray(value)
    : value === null
      ? shape === 'an object or null'
      : typeof value === 'object' && !Array.isArray(value);

/**
 * A part of a record as read back (JSON a driver parsed), checked to have the shape the store
 * writes; else an {@link UnreadableRecordError} naming the store and the part, never the value
 * (src/ports/store-errors.ts). Only the top level is checked: that is what tells a part the
 * store wrote from one edited beside it, at no cost to a read.
 */
export function storedPart<T>(value: unknown, store: string, part: string, shape: StoredShape): T {
  if (!fits(value, shape)) throw new UnreadableRecordError(store, part, `not ${shape}`);
  return value as T;
}

/** A part of a record stored as JSON text: parsed, then checked as {@link storedPart} checks it. */
export function parsedPart<T>(text: string, store: string, part: string, shape: StoredShape): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UnreadableRecordError(store, part, 'not JSON');
  }
  return storedPart<T>(value, store, part, shape);
}

/**
 * A part stored as JSON text and sent as it is (the personal details' text path), checked only
 * to open an object: parsing it would cost what the text path saves, and the writer and the
 * engine (PostgreSQL's json column) hold it to JSON; a part edited to another JSON value is
 * refused as {@link storedPart} refuses it.
 */
export function storedObjectText(value: unknown, store: string, part: string): string {
  if (typeof value !== 'string' || !/^\s*\{/.test(value))
    throw new UnreadableRecordError(store, part, 'not an object');
  return value;
}
