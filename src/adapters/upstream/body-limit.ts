/**
 * The bound on what is read of another service's answer (`UPSTREAM_MAX_BODY_BYTES`): the
 * upstream case store's answers and its token endpoint's. undici's `maxResponseSize` stops
 * reading past it and destroys the connection (never reused); this is what is decided from
 * the headers before reading, and how either refusal is logged: the limit and the length or
 * coding the other side declared, never the body.
 */
export class BodyRefused extends Error {
  constructor(
    readonly label: 'body-too-large' | 'invalid-body',
    readonly mismatch: { readonly field: string; readonly reason: string },
  ) {
    super(`${label}: ${mismatch.reason}`);
    this.name = 'BodyRefused';
  }
}

/** What is asked for: identity only, so a body is never inflated and its size on the wire is its size. */
export const IDENTITY_ONLY = { 'accept-encoding': 'identity' } as const;

/** An answer as undici's `request` gives it: its headers and its body stream. */
interface Answer {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: {
    text(): Promise<string>;
    on(event: 'error', listener: () => void): unknown;
    destroy(): unknown;
  };
}

/**
 * The body's text, read within `maxBodyBytes` (the dispatcher's `maxResponseSize`, which
 * must be the same). Rejects with {@link BodyRefused} for a `Content-Length` over the limit or
 * a `Content-Encoding` other than identity (none was asked for, and it is never inflated),
 * both unread, their connection destroyed; and for a body that ran past the limit while it
 * was read. Any other failure rejects as it came.
 */
export async function boundedText(answer: Answer, maxBodyBytes: number): Promise<string> {
  const refused = refusalOf(answer.headers, maxBodyBytes);
  if (refused !== undefined) {
    // The abort this causes is expected, and is not let loose as an unhandled error.
    answer.body.on('error', () => {});
    answer.body.destroy();
    throw refused;
  }
  try {
    return await answer.body.text();
  } catch (error) {
    if ((error as { code?: unknown } | undefined)?.code !== 'UND_ERR_RES_EXCEEDED_MAX_SIZE') throw error;
    throw new BodyRefused('body-too-large', {
      field: '(body)',
      reason: `longer than UPSTREAM_MAX_BODY_BYTES (${maxBodyBytes}); reading stopped there`,
    });
  }
}

function refusalOf(headers: Answer['headers'], maxBodyBytes: number): BodyRefused | undefined {
  const coding = String(headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (coding !== '' && coding !== 'identity') {
    return new BodyRefused('invalid-body', {
      field: '(body)',
      reason: `Content-Encoding ${coding.slice(0, 40)}, not asked for; not read`,
    });
  }
  const declared = headers['content-length'];
  const length = typeof declared === 'string' && /^\d{1,16}$/.test(declared) ? Number(declared) : undefined;
  if (length !== undefined && length > maxBodyBytes) {
    return new BodyRefused('body-too-large', {
      field: '(body)',
      reason: `Content-Length ${length} over UPSTREAM_MAX_BODY_BYTES (${maxBodyBytes}); not read`,
    });
  }
  return undefined;
}
