import { crnFormatOf } from '../composition/config.js';
import { openApiDocument } from '../composition/openapi-document.js';
import { writeApiReference } from '../openapi-html.js';
import { EXIT } from './exit.js';
import type { Io } from './io.js';

/**
 * `openapi`: prints the OpenAPI document exactly as `serve` serves it at `/openapi.json`
 * (with this environment's CRN_PATTERN and PUBLIC_URL), for a client generator, which
 * cannot fetch it from behind the perimeter by URL. `--html FILE` writes it instead as one
 * self-contained HTML API reference to hand to consumers (src/app/openapi-html.ts).
 */
export async function openapi(values: { html?: string | undefined }, io: Io): Promise<number> {
  const document = await openApiDocument(crnFormatOf(io.env), io.env.PUBLIC_URL || '/');
  if (values.html === undefined) {
    io.out(document);
    return EXIT.ok;
  }
  const bytes = writeApiReference(values.html, JSON.parse(document));
  io.out(`API reference written to ${values.html} (${bytes} bytes)`);
  return EXIT.ok;
}
