/**
 * The bound on what is read of another service's answer (`UPSTREAM_MAX_BODY_BYTES`): the
 * upstream case store's answers and its token endpoint's. undici's `maxResponseSize` stops
 * reading past it and destroys the connection (never reused); this is what is decided from
 * the headers before reading, and how either refusal is logged: the limit and the length or
 * coding the other side declared, never the body.
 */
export interface BodyRefusal {
  readonly label: 'body-too-large' | 'invalid-body';
  readonly mismatch: { readonly field: string; readonly reason: string };
}

/** What is asked for: identity only, so a body is never inflated and its size on the wire is its size. */
export const IDENTITY_ONLY = { 'accept-encoding': 'identity' } as const;

/**
 * Why an answer's body is not to be read at all: a `Content-Length` over the limit, or a
 * `Content-Encoding` other than identity (none was asked for, and it is never inflated).
 */
export function refusalOf(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  maxBodyBytes: number,
): BodyRefusal | undefined {
  const coding = String(headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (coding !== '' && coding !== 'identity') {
    return {
      label: 'invalid-body',
      mismatch: {
        field: '(body)',
        reason: `Content-Encoding ${coding.slice(0, 40)}, not asked for; not read`,
      },
    };
  }
  const declared = headers['content-length'];
  const length = typeof declared === 'string' && /^\d{1,16}$/.test(declared) ? Number(declared) : undefined;
  if (length !== undefined && length > maxBodyBytes) {
    return {
      label: 'body-too-large',
      mismatch: {
        field: '(body)',
        reason: `Content-Length ${length} over UPSTREAM_MAX_BODY_BYTES (${maxBodyBytes}); not read`,
      },
    };
  }
  return undefined;
}

/** The refusal for a body that ran past the limit while it was read (undici's error), if that is what failed. */
export function overLimit(error: unknown, maxBodyBytes: number): BodyRefusal | undefined {
  if ((error as { code?: unknown } | undefined)?.code !== 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return undefined;
  return {
    label: 'body-too-large',
    mismatch: {
      field: '(body)',
      reason: `longer than UPSTREAM_MAX_BODY_BYTES (${maxBodyBytes}); reading stopped there`,
    },
  };
}

/**
 * Drops a body that is not to be read: its connection is destroyed with it, never reused. The
 * abort it causes is expected, and is not let loose as an unhandled error.
 */
export function discard(body: {
  on(event: 'error', listener: () => void): unknown;
  destroy(): unknown;
}): void {
  body.on('error', () => {});
  body.destroy();
}
