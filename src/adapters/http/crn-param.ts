import { Crn, type CrnFormat } from '../../domain/crn.js';

/**
 * The validated `crn` path parameter as a domain `Crn`, also kept on the context so the
 * request's audit record names the case asked for.
 */
export function crnParam(c: { set(key: 'crn', value: string): void }, raw: string, format: CrnFormat): Crn {
  const crn = Crn.parse(raw, format);
  c.set('crn', crn.value);
  return crn;
}
