import type { RouteHandler, z } from '@hono/zod-openapi';
import { contentText } from '../../domain/subject-access/content-text.js';
import {
  getSubjectAccessRequest,
  type SubjectAccessAnswer,
  type SubjectAccessDeps,
} from '../../domain/use-cases/subject-access.js';
import type { AppEnv, HttpLogger } from './env.js';
import { respondEmpty, respondJsonStream, respondText } from './respond.js';
import type { SubjectAccessContentSchema, SubjectAccessRoutes } from './subject-access.routes.js';

/**
 * The subject access request's handlers (decisions §22): the answer is checked whole before
 * its status is sent (a trail that cannot be read whole is a 503 from the use case), then
 * streamed, its disclosures read again a batch at a time. Should the second read fail (the
 * trail changed under it), the stream is broken off, never ended as if complete: the client
 * sees a failed transfer, not a shorter 200.
 */

export interface SubjectAccessOptions extends SubjectAccessDeps {
  /** The template's text, read once at start (the same bytes on every call). */
  readonly template: string;
}

type Content = Extract<SubjectAccessAnswer, { kind: 'content' }>;

/** The answer's JSON text as a stream: broken off (never ended) when the second read fails. */
function contentStream(answer: Content, broken: (error: Error) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const text = contentText(answer)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<string>;
      try {
        next = await text.next();
      } catch (error) {
        broken(error as Error);
        controller.error(error);
        return;
      }
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await text.return?.(undefined);
    },
  });
}

export function subjectAccessHandlers(options: SubjectAccessOptions, logger: HttpLogger) {
  const getSar: RouteHandler<SubjectAccessRoutes['getSubjectAccessRequest'], AppEnv> = async (c) => {
    const deadline = c.get('deadline');
    deadline.engine = 'auditStore';
    const answer = await getSubjectAccessRequest(options, c.req.valid('query'), deadline);
    if (answer.kind === 'not-ours') return respondEmpty(c, 209);
    if (answer.kind === 'nothing-held') return respondEmpty(c, 204);
    const requestId = c.get('requestId');
    return respondJsonStream<z.infer<typeof SubjectAccessContentSchema>, 200>(
      c,
      200,
      contentStream(answer, (error) =>
        logger.error(
          { requestId, err: { name: error.name, message: error.message } },
          'subject access answer broken off: the audit trail changed while it was sent',
        ),
      ),
    );
  };
  const getTemplate: RouteHandler<SubjectAccessRoutes['getSubjectAccessRequestTemplate'], AppEnv> = (c) =>
    respondText(c, 200, options.template);
  return { getSubjectAccessRequest: getSar, getSubjectAccessRequestTemplate: getTemplate };
}
