import { GENERIC_RESTRICTION_MESSAGE } from '../../domain/access/limited-access.js';
import { LimitedAccessError } from '../../domain/errors.js';

/** What an upstream's problem answer (RFC 9457) says, and its limited-access refusal as this service's own. */

/** The longest upstream detail passed on to a client; a longer one is replaced by the generic sentence. */
const MAX_DETAIL = 500;

/** The problem body's `type` and `detail`, when the text is one; empty strings otherwise. */
export function problemOf(text: string): { type: string; detail: string } {
  try {
    const body = JSON.parse(text) as { type?: unknown; detail?: unknown };
    return {
      type: typeof body.type === 'string' ? body.type : '',
      detail: typeof body.detail === 'string' ? body.detail : '',
    };
  } catch {
    return { type: '', detail: '' };
  }
}

/**
 * The upstream's limited-access refusal as this service's own: its detail is passed on (it
 * is the case's message, meant for the user), unless it is empty, too long or holds a
 * control character, when the generic sentence is sent instead.
 */
export function limitedAccessRefusal(detail: string): LimitedAccessError {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  const usable = detail.trim() !== '' && detail.length <= MAX_DETAIL && !/[\u0000-\u001f\u007f]/.test(detail);
  return new LimitedAccessError('refused-upstream', usable ? detail : GENERIC_RESTRICTION_MESSAGE);
}
