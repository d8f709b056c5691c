import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import type { Environment } from '../../ports/stores.js';
import { readRegularFileSync } from './named-files.js';

/**
 * The AWS SDK's shared configuration files (`~/.aws/config`, `~/.aws/credentials`) as the
 * SDK the service runs reads them, so that what the service checks and shows of them is what
 * the SDK would use (decisions §20). Ported from `@smithy/core/config` (the SDK of
 * `@aws-sdk/client-sts`; `@smithy/shared-ini-file-loader` 2.4, under
 * `@aws-sdk/client-acm-pca`, parses alike): the files' paths (`AWS_CONFIG_FILE`,
 * `AWS_SHARED_CREDENTIALS_FILE`, else under the home directory), the INI dialect (comments,
 * `[profile NAME]` and `[services NAME]` sections, indented sub-sections such as
 * `sts =` / `  endpoint_url = …`), and the profile (`AWS_PROFILE`, else `default`) merged
 * from both files, the config file's keys winning. test/adapters/shared/aws-endpoints.test.ts
 * holds the port to the SDK's own parser.
 *
 * Where the SDK passes over a file silently (one it cannot read, one with a `__proto__`
 * section), the service refuses it, naming it: a file that may be read differently later is
 * not taken for empty. A missing file is empty, as for the SDK. The files are read as every
 * named file is (named-files.ts): a FIFO or a directory is refused, never waited on. The
 * credentials file holds keys: nothing of either file's contents ever appears in a message.
 */

/** One section of a file: its keys, a sub-section's as `SUB.KEY` (`sts.endpoint_url`). */
export type IniSection = Readonly<Record<string, string>>;

/** A parsed file: its sections by name (`default`, `profile.dev` or `dev`, `services.local`). */
export type IniFile = Readonly<Record<string, IniSection>>;

/** The SDK's section types: a `[TYPE NAME]` section of another type is passed over. */
const SECTION_TYPES = ['profile', 'sso-session', 'services'] as const;
/** `TYPE NAME` or `TYPE "NAME"`, as the SDK matches a section's name. */
const PREFIXED_SECTION = /^([\w-]+)\s(["'])?([\w@+.%:/-]+)\2$/;
const BLOCKED_SECTIONS = ['__proto__', 'profile __proto__'];

/** Thrown for a file the SDK would not read as written. */
export class AwsSharedConfigError extends Error {}

const isSectionType = (name: string): boolean => (SECTION_TYPES as readonly string[]).includes(name);

/**
 * `text` as the SDK's `parseIni` reads it. Sections are kept by the SDK's names: a typed one
 * as `TYPE.NAME`, any other as written. Throws {@link AwsSharedConfigError} for a
 * `__proto__` section (the SDK throws, and then takes the file for empty).
 */
export function parseAwsIni(text: string): IniFile {
  const sections: Record<string, Record<string, string>> = Object.create(null);
  let section: string | undefined;
  let subSection: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const trimmed = (line.split(/(^|\s)[;#]/)[0] ?? '').trim();
    if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
      section = undefined;
      subSection = undefined;
      const name = trimmed.slice(1, -1);
      const prefixed = PREFIXED_SECTION.exec(name);
      if (prefixed) {
        const [, type = '', , rest = ''] = prefixed;
        if (isSectionType(type)) section = `${type}.${rest}`;
      } else {
        section = name;
      }
      if (BLOCKED_SECTIONS.includes(name)) throw new AwsSharedConfigError('it has a section named __proto__');
      continue;
    }
    if (section === undefined) continue;
    const equals = trimmed.indexOf('=');
    if (equals <= 0) continue;
    const key = trimmed.slice(0, equals).trim();
    const value = trimmed.slice(equals + 1).trim();
    if (value === '') {
      subSection = key;
      continue;
    }
    // A line that is not indented ends the sub-section (the SDK's rule, kept as it is).
    if (subSection !== undefined && line.trimStart() === line) subSection = undefined;
    sections[section] ??= Object.create(null) as Record<string, string>;
    (sections[section] as Record<string, string>)[subSection === undefined ? key : `${subSection}.${key}`] =
      value;
  }
  return sections;
}

/**
 * The config file's sections as the SDK keeps them (`getConfigData`): `[default]`, then each
 * typed section, `profile.NAME` as `NAME` (so `[profile default]` replaces `[default]`), the
 * others (`services.NAME`, `sso-session.NAME`) by their full name; untyped sections dropped.
 */
export function configFileSections(parsed: IniFile): IniFile {
  const kept: Record<string, IniSection> = Object.create(null);
  if (parsed.default !== undefined) kept.default = parsed.default;
  for (const [name, section] of Object.entries(parsed)) {
    const dot = name.indexOf('.');
    if (dot === -1 || !isSectionType(name.slice(0, dot))) continue;
    kept[name.slice(0, dot) === 'profile' ? name.slice(dot + 1) : name] = section;
  }
  return kept;
}

/** The home directory as the SDK finds it: HOME, USERPROFILE, HOMEDRIVE+HOMEPATH, else the OS's. */
function homeOf(env: Environment): string {
  if (env.HOME) return env.HOME;
  if (env.USERPROFILE) return env.USERPROFILE;
  if (env.HOMEPATH) return `${env.HOMEDRIVE ?? `C:${sep}`}${env.HOMEPATH}`;
  return homedir();
}

/** One of the two files: where it is, and how a message names it. */
export interface AwsFileLocation {
  readonly path: string;
  /** `AWS_CONFIG_FILE (/path)` when a variable names it, else the default path alone. */
  readonly named: string;
  /** What starts a refusal of the file itself: `AWS_CONFIG_FILE:`, or `the AWS SDK's config file`. */
  readonly label: string;
}

/** Where a file is: its variable's value (`~/` taken as the home directory), else under `~/.aws`. */
function locate(env: Environment, variable: string, name: string): AwsFileLocation {
  const given = env[variable];
  if (!given) {
    const path = join(homeOf(env), '.aws', name);
    return { path, named: path, label: `the AWS SDK's ${name} file` };
  }
  const path = given.startsWith('~/') ? join(homeOf(env), given.slice(2)) : given;
  return { path, named: `${variable} (${path})`, label: `${variable}:` };
}

/** The profile the SDK uses: `AWS_PROFILE`, else `default`. */
export const awsProfileOf = (env: Environment): string => env.AWS_PROFILE || 'default';

/** The SDK's shared configuration, as read for one profile. */
export interface AwsSharedConfig {
  readonly profileName: string;
  /** The profile, its keys from the credentials file and then the config file (the config file's win). */
  readonly profile: IniSection;
  /** The config file's sections ({@link configFileSections}). */
  readonly configSections: IniFile;
  readonly configFile: AwsFileLocation;
  readonly credentialsFile: AwsFileLocation;
  /** Which file a key of the profile was read from. */
  fileOf(key: string): AwsFileLocation;
}

/**
 * A file's sections, or none when it does not exist (as for the SDK). Any other failure
 * (not a regular file, unreadable, a `__proto__` section) is thrown as an
 * {@link AwsSharedConfigError} naming the file.
 */
function readIni(location: AwsFileLocation): IniFile {
  try {
    statSync(location.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
  }
  const refuse = (message: string) => new AwsSharedConfigError(message);
  const { bytes } = readRegularFileSync(location.label, location.path, refuse, { maxBytes: 1024 * 1024 });
  try {
    return parseAwsIni(bytes.toString('utf8'));
  } catch (error) {
    throw new AwsSharedConfigError(`${location.named}: ${(error as Error).message}`);
  }
}

/**
 * Reads the SDK's two shared files for the profile `env` names, as the SDK would. Throws
 * {@link AwsSharedConfigError} naming a file that cannot be read as the SDK would read it.
 */
export function readAwsSharedConfig(env: Environment): AwsSharedConfig {
  const configFile = locate(env, 'AWS_CONFIG_FILE', 'config');
  const credentialsFile = locate(env, 'AWS_SHARED_CREDENTIALS_FILE', 'credentials');
  const configSections = configFileSections(readIni(configFile));
  const credentials = readIni(credentialsFile);
  const profileName = awsProfileOf(env);
  const fromConfig = configSections[profileName] ?? {};
  const profile = { ...(credentials[profileName] ?? {}), ...fromConfig };
  return {
    profileName,
    profile,
    configSections,
    configFile,
    credentialsFile,
    fileOf: (key) => (key in fromConfig ? configFile : credentialsFile),
  };
}
