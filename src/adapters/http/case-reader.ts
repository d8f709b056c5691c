import type { Context } from 'hono';
import { type Answer, type CaseReader, CLIENT_AS_ITSELF } from '../../domain/use-cases/case-found.js';
import type { AppEnv } from './env.js';

/**
 * Who reads, from the admitted caller: its verified on-behalf-of user (and token), its
 * client's limited-access setting and withheld fields, and the request's deadline (the case
 * store is what the request waits on from here). Without a caller (tests of the core
 * with no perimeter) the reader is a client acting as itself with the defaults: refused
 * every limited case.
 */
export function readerOf(c: Context<AppEnv>): CaseReader {
  const caller = c.get('caller');
  const deadline = c.get('deadline');
  deadline.engine = 'caseStore';
  if (caller === undefined) return { ...CLIENT_AS_ITSELF, deadline };
  return {
    user: caller.onBehalfOf?.email ?? null,
    onBehalfOfToken: caller.onBehalfOf?.token ?? null,
    limitedAccess: caller.client.limitedAccess,
    withheld: caller.client.redact,
    deadline,
  };
}

/** The answer's body, once how limited access let it through is noted for the audit record. */
export function answered<T>(c: Context<AppEnv>, answer: Answer<T>): T {
  if (answer.access !== 'open') c.set('access', answer.access);
  return answer.body;
}
