import { crnFormatOf } from '../composition/config.js';
import { openApiDocument } from '../composition/openapi-document.js';
import { parse, positionals } from './arguments.js';
import { EXIT } from './exit.js';
import type { Io } from './io.js';

/**
 * `openapi`: prints the OpenAPI document exactly as `serve` serves it at `/openapi.json`
 * (with this environment's CRN_PATTERN and PUBLIC_URL), for a client generator, which
 * cannot fetch it from behind the perimeter by URL.
 */
export async function openapi(args: string[], io: Io): Promise<number> {
  positionals(parse(args, {}).positionals, []);
  io.out(await openApiDocument(crnFormatOf(io.env), io.env.PUBLIC_URL || '/'));
  return EXIT.ok;
}
