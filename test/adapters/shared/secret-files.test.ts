import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkSecretFile,
  readNamedFileAsync,
  readSecretFile,
  readSecretFileAsync,
  secretFileModeProblem,
} from '../../../src/adapters/shared/secret-files.js';

/**
 * The rule for private key and secret files: one readable or writable by others (o+r, o+w)
 * is refused, the mode taken through symlinks, naming the variable, the file and its mode
 * and saying the fix, never the contents; readable by the group is allowed. Run on Node, Bun
 * and Deno.
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-secret-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'hunter2-the-secret';

/** A file holding the secret, with exactly this mode (umask set aside). */
function fileOf(name: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, SECRET, { mode });
  chmodSync(path, mode);
  return path;
}

class Refused extends Error {}
const refuse = (message: string) => new Refused(message);

const refusal = (variable: string, path: string, mode: string, what = 'readable') =>
  `${variable}: ${path} is ${what} by others (mode ${mode}); make it 0640 or 0600 (on Kubernetes: defaultMode: 0440 on the secret volume; the default is 0644)`;

/** What `read` threw, or undefined. */
function thrown(read: () => unknown): Error | undefined {
  try {
    read();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

describe('readSecretFile', () => {
  it.each([
    ['0600', 0o600],
    ['0400', 0o400],
    ['0640', 0o640],
    ['0440', 0o440],
    ['0660', 0o660],
  ])('reads a file of mode %s (no read bit for others)', (shown, mode) => {
    const path = fileOf(`ok-${shown}`, mode);
    expect(readSecretFile('TLS_KEY', path, refuse)).toBe(SECRET);
  });

  it.each([
    ['0644', 'readable', 0o644],
    ['0604', 'readable', 0o604],
    ['0444', 'readable', 0o444],
    ['0755', 'readable', 0o755],
    ['0602', 'writable', 0o602],
    ['0622', 'writable', 0o622],
    ['0402', 'writable', 0o402],
    ['0666', 'readable and writable', 0o666],
  ])(
    'refuses a file of mode %s (%s by others), naming the variable, the file, its mode and the fix',
    (shown, what, mode) => {
      const path = fileOf(`open-${shown}`, mode);
      const error = thrown(() => readSecretFile('UPSTREAM_TLS_KEY', path, refuse));
      expect(error).toBeInstanceOf(Refused);
      expect(error?.message).toBe(refusal('UPSTREAM_TLS_KEY', path, shown, what));
      expect(error?.message).not.toContain(SECRET);
    },
  );

  it('refuses in the same words without blocking the event loop (at a reload), and reads what it allows', async () => {
    await expect(readSecretFileAsync('TLS_KEY', fileOf('async-0640', 0o640), refuse)).resolves.toBe(SECRET);
    const open = fileOf('async-0602', 0o602);
    await expect(readSecretFileAsync('TLS_KEY', open, refuse)).rejects.toThrow(
      refusal('TLS_KEY', open, '0602', 'writable'),
    );
    // A certificate is not a secret: its mode is not judged.
    await expect(readNamedFileAsync('TLS_CERT', open, refuse)).resolves.toBe(SECRET);
  });

  it('refuses a symlink to a file others can read: the mode is the target’s, the file named as given', () => {
    const target = fileOf('target-0644', 0o644);
    const link = join(dir, 'link-to-0644');
    symlinkSync(target, link);
    expect(thrown(() => readSecretFile('TLS_KEY', link, refuse))?.message).toBe(
      refusal('TLS_KEY', link, '0644'),
    );
  });

  it('follows a mounted Kubernetes secret (key -> ..data/key, ..data -> a version): 0440 read, 0644 refused', () => {
    const secret = join(dir, 'secret');
    for (const [version, mode] of [
      ['v1', 0o440],
      ['v2', 0o644],
    ] as const) {
      mkdirSync(join(secret, version), { recursive: true });
      writeFileSync(join(secret, version, 'tls.key'), `${SECRET} ${version}`, { mode });
      chmodSync(join(secret, version, 'tls.key'), mode);
    }
    symlinkSync('v1', join(secret, '..data'));
    symlinkSync(join('..data', 'tls.key'), join(secret, 'tls.key'));
    const key = join(secret, 'tls.key');
    expect(readSecretFile('TLS_KEY', key, refuse)).toBe(`${SECRET} v1`);
    symlinkSync('v2', join(secret, '..data_tmp'));
    renameSync(join(secret, '..data_tmp'), join(secret, '..data'));
    expect(thrown(() => readSecretFile('TLS_KEY', key, refuse))?.message).toBe(
      refusal('TLS_KEY', key, '0644'),
    );
  });

  it('says a file that cannot be read cannot be read, with the caller’s error', () => {
    const missing = join(dir, 'missing.pem');
    const error = thrown(() => readSecretFile('AUDIT_SIGNING_KEY', missing, refuse));
    expect(error).toBeInstanceOf(Refused);
    expect(error?.message).toBe(`AUDIT_SIGNING_KEY: ${missing} cannot be read (ENOENT)`);
    const folder = join(dir, 'a-folder');
    mkdirSync(folder, { mode: 0o700 });
    expect(thrown(() => readSecretFile('AUDIT_SIGNING_KEY', folder, refuse))?.message).toBe(
      `AUDIT_SIGNING_KEY: ${folder} is not a regular file (a directory)`,
    );
  });
});

describe('checkSecretFile', () => {
  it('passes a file others cannot read, and one it cannot stat (the caller’s read says why)', () => {
    expect(() => checkSecretFile('AUDIT_SIGNING_KEY', fileOf('check-0640', 0o640), refuse)).not.toThrow();
    expect(() => checkSecretFile('AUDIT_SIGNING_KEY', join(dir, 'absent'), refuse)).not.toThrow();
  });

  it('refuses a file others can read, through a symlink too', () => {
    const path = fileOf('check-0644', 0o644);
    const link = join(dir, 'check-link');
    symlinkSync(path, link);
    for (const given of [path, link]) {
      const error = thrown(() => checkSecretFile('AUDIT_SIGNING_KEY', given, refuse));
      expect(error).toBeInstanceOf(Refused);
      expect(error?.message).toBe(refusal('AUDIT_SIGNING_KEY', given, '0644'));
    }
    const writable = fileOf('check-0602', 0o602);
    expect(thrown(() => checkSecretFile('AUDIT_SIGNING_KEY', writable, refuse))?.message).toBe(
      refusal('AUDIT_SIGNING_KEY', writable, '0602', 'writable'),
    );
  });
});

describe('secretFileModeProblem', () => {
  it('looks at the read and write bits for others alone', () => {
    expect(secretFileModeProblem('X', '/k', 0o100640)).toBeUndefined();
    expect(secretFileModeProblem('X', '/k', 0o100660)).toBeUndefined();
    expect(secretFileModeProblem('X', '/k', 0o100601)).toBeUndefined();
    expect(secretFileModeProblem('X', '/k', 0o100604)).toBe(refusal('X', '/k', '0604'));
    expect(secretFileModeProblem('X', '/k', 0o104644)).toBe(refusal('X', '/k', '4644'));
    expect(secretFileModeProblem('X', '/k', 0o100602)).toBe(refusal('X', '/k', '0602', 'writable'));
  });
});
