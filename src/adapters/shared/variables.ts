import * as z from 'zod';
import type { Environment, NoSettings, StoreSettingsReader } from '../../ports/stores.js';
import { HTTPS_ONLY, isEncryptedOrLoopback } from './loopback.js';

/**
 * Reading variables from the environment: the rules every setting follows, whether the
 * service's own (`src/app/composition/config/`, an area a file) or a store kind's (each kind's `settings.ts`). An empty
 * variable counts as unset, as shells and `.env` files commonly produce them; each problem
 * names its variable.
 */

/** A whole number in `min..max`, written in digits only. */
export const wholeNumber = (name: string, fallback: number, min: number, max: number) =>
  z
    .string()
    .default(String(fallback))
    .transform((raw, ctx) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `${name} must be a whole number ${min}..${max}` });
        return z.NEVER;
      }
      return n;
    });

/** A variable set to something (a path, a name, a URL checked elsewhere), or unset. */
export const optionalText = () => z.string().min(1).optional();

/** `a, b or c`: the words of a list of choices. */
const orWords = (choices: readonly string[]): string =>
  choices.length === 1 ? `${choices[0]}` : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;

/** One of `choices`, else `fallback`; any other value is refused naming them all, in their order. */
export const oneOf = <const T extends readonly [string, ...string[]]>(choices: T, fallback: T[number]) =>
  z.enum(choices, { error: `expected ${orWords(choices)}` }).default(fallback);

/**
 * A client certificate's variable and its key's are set together or not at all; the problem
 * names the one that is missing.
 */
export function certificateWithKey<E extends Record<string, unknown>>(
  env: E,
  ctx: z.RefinementCtx,
  cert: keyof E & string,
  key: keyof E & string,
): void {
  if ((env[cert] === undefined) !== (env[key] === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [env[cert] === undefined ? cert : key],
      message: `${cert} and ${key} go together`,
    });
  }
}

/** An http(s):// URL. */
export const httpUrl = () => z.url({ protocol: /^https?$/, error: 'expected an http(s):// URL' });

/**
 * A URL a secret or personal data travels to (a token endpoint, AWS): `https://`, or `http://`
 * only to a loopback host (decisions §17).
 */
export const httpsUrl = () =>
  // A value that is no URL at all is httpUrl's to refuse: this refinement runs on it too.
  httpUrl().refine((raw) => !URL.canParse(raw) || isEncryptedOrLoopback(new URL(raw)), { error: HTTPS_ONLY });

/** The variables of `names` that are set to something. */
export function presentIn(env: Environment, names: readonly string[]): Record<string, string> {
  const present: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') present[name] = value;
  }
  return present;
}

/** `VARIABLE: message` for each issue, the variable being the first element of its path. */
export const problemsOf = (error: z.ZodError, fallbackName = '(environment)'): string[] =>
  error.issues.map((issue) => `${String(issue.path[0] ?? fallbackName)}: ${issue.message}`);

/**
 * A store kind's settings from a zod object over its variables (with any checks between
 * them), mapped to the kind's own plain settings. The variables, and their defaults as
 * written, are read off the schema.
 */
export function settingsReader<Schema extends z.ZodObject, S>(
  schema: Schema,
  toSettings: (values: z.output<Schema>) => S,
  options: { secret?: readonly (keyof z.output<Schema> & string)[] } = {},
): StoreSettingsReader<S> {
  const names = Object.keys(schema.shape);
  const variables = names.map((name) => {
    const fallback = (schema.shape[name] as z.ZodType).safeParse(undefined);
    const shown = fallback.success && fallback.data !== undefined ? String(fallback.data) : undefined;
    return {
      name,
      ...(shown !== undefined ? { fallback: shown } : {}),
      ...(options.secret?.includes(name) ? { secret: true } : {}),
    };
  });
  return {
    variables,
    read: (env) => {
      const parsed = schema.safeParse(presentIn(env, names));
      return parsed.success ? { settings: toSettings(parsed.data) } : { problems: problemsOf(parsed.error) };
    },
  };
}

/** The reader of a kind that has no variables of its own. */
export const noSettings: StoreSettingsReader<NoSettings> = {
  variables: [],
  read: () => ({ settings: {} }),
};
