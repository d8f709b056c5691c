import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_NAMED_FILE_BYTES,
  type RegularFile,
  type RegularFileOptions,
  readRegularFile,
  readRegularFileSync,
} from '../../../src/adapters/shared/named-files.js';

/**
 * The one reader of files named by a variable or an option (decisions §20): opened without
 * blocking, judged on the descriptor opened, a regular file (symlinks followed) of a bounded
 * size or refused naming the label, the path and what it is; a caller's mode rule judged
 * before a byte is read. Both forms, in the same words. A FIFO is refused at once, with no
 * writer and with one: the synchronous form is tried in a process of its own, ended by a
 * timeout should it wait (as it did before: the test then fails, it does not hang).
 */

const dir = mkdtempSync(join(tmpdir(), 'case-read-named-files-'));
let socketServer: Server;
const paths = {
  file: join(dir, 'cert.pem'),
  link: join(dir, 'link.pem'),
  fifo: join(dir, 'key.fifo'),
  fifoLink: join(dir, 'link-to-fifo'),
  folder: join(dir, 'a-folder'),
  socket: join(dir, 'a.sock'),
  missing: join(dir, 'missing.pem'),
};

beforeAll(async () => {
  writeFileSync(paths.file, 'certificate text\n', { mode: 0o640 });
  chmodSync(paths.file, 0o640);
  symlinkSync(paths.file, paths.link);
  expect(spawnSync('mkfifo', [paths.fifo]).status).toBe(0);
  symlinkSync(paths.fifo, paths.fifoLink);
  mkdirSync(paths.folder);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(paths.socket, resolve));
});
afterAll(async () => {
  await new Promise((resolve) => socketServer.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

class Refused extends Error {}
const refuse = (message: string) => new Refused(message);

/** Both forms, each giving what it read or the error it threw. */
const FORMS = {
  sync: (path: string, options?: RegularFileOptions): Promise<RegularFile> => {
    try {
      return Promise.resolve(readRegularFileSync('TLS_KEY:', path, refuse, options));
    } catch (error) {
      return Promise.reject(error);
    }
  },
  async: (path: string, options?: RegularFileOptions) => readRegularFile('TLS_KEY:', path, refuse, options),
};

/**
 * What each form is shown in this process: a FIFO only to the asynchronous form, whose wait
 * (were it to wait) would hold a thread of libuv's pool, not this one, so that the test's
 * timeout ends it; the synchronous form's FIFO is tried in a process of its own (below).
 */
const NOT_REGULAR = {
  sync: [
    ['a directory', 'folder'],
    ['a socket', 'socket'],
  ],
  async: [
    ['a FIFO', 'fifo'],
    ['a FIFO, through a symlink', 'fifoLink'],
    ['a directory', 'folder'],
    ['a socket', 'socket'],
  ],
} as const;

describe.each(Object.entries(FORMS))('readRegularFile (%s)', (form, read) => {
  it('reads a regular file, and one a symlink leads to, with the mode of the file read', async () => {
    for (const path of [paths.file, paths.link]) {
      const file = await read(path);
      expect(file.bytes.toString('utf8')).toBe('certificate text\n');
      expect(file.mode & 0o7777).toBe(0o640);
    }
  });

  it.each(NOT_REGULAR[form as keyof typeof NOT_REGULAR])(
    'refuses %s, naming the label, the path and what it is',
    async (_, name) => {
      const kind = { fifo: 'a FIFO', fifoLink: 'a FIFO', folder: 'a directory', socket: 'a socket' }[name];
      const reading = read(paths[name]);
      await expect(reading).rejects.toBeInstanceOf(Refused);
      await expect(reading).rejects.toThrow(`TLS_KEY: ${paths[name]} is not a regular file (${kind})`);
    },
  );

  it('refuses a device (/dev/null: empty, and endless were it /dev/zero)', async () => {
    await expect(read('/dev/null')).rejects.toThrow(
      'TLS_KEY: /dev/null is not a regular file (a character device)',
    );
  });

  it('says a file that cannot be read cannot be read', async () => {
    await expect(read(paths.missing)).rejects.toThrow(`TLS_KEY: ${paths.missing} cannot be read (ENOENT)`);
  });

  it('refuses a file over the bound, the default or the caller’s', async () => {
    const big = join(dir, `big-${form}`);
    writeFileSync(big, Buffer.alloc(MAX_NAMED_FILE_BYTES + 1));
    await expect(read(big)).rejects.toThrow(`TLS_KEY: ${big} is over ${MAX_NAMED_FILE_BYTES} bytes`);
    await expect(read(paths.file, { maxBytes: 16 })).rejects.toThrow(
      `TLS_KEY: ${paths.file} is over 16 bytes`,
    );
    expect((await read(paths.file, { maxBytes: 17 })).bytes.length).toBe(17);
    rmSync(big);
  });

  it('judges the mode of the file opened (through the link) by the caller’s rule, before reading', async () => {
    const modes: number[] = [];
    const modeProblem = (mode: number) => {
      modes.push(mode & 0o7777);
      return mode & 0o040 ? 'TLS_KEY: its group may read it' : undefined;
    };
    await expect(read(paths.link, { modeProblem })).rejects.toThrow(/^TLS_KEY: its group may read it$/);
    expect(modes).toEqual([0o640]);
    // Not a regular file: refused as such, the mode rule not asked.
    await expect(read(paths.folder, { modeProblem })).rejects.toThrow(/not a regular file \(a directory\)/);
    expect(modes).toEqual([0o640]);
  });
});

/** Node runs the module's TypeScript by stripping its types; Bun and Deno run these tests too. */
const onNode = !('Bun' in globalThis) && !('Deno' in globalThis);

describe('the synchronous form never waits on a FIFO', () => {
  it.skipIf(!onNode)('ends by itself, refusing it, in a process of its own', () => {
    // Node strips the types of the module's TypeScript itself: it imports node:fs alone.
    const module = pathToFileURL(join(process.cwd(), 'src/adapters/shared/named-files.ts')).href;
    const script = `
      const { readRegularFileSync } = await import(${JSON.stringify(module)});
      for (const path of ${JSON.stringify([paths.fifo, paths.fifoLink])}) {
        try {
          readRegularFileSync('TLS_KEY:', path, (m) => new Error(m));
          console.log('read');
        } catch (error) {
          console.log(error.message);
        }
      }`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    // Ended by itself (not by the timeout's signal), and said why.
    expect(result.signal).toBeNull();
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual([
      `TLS_KEY: ${paths.fifo} is not a regular file (a FIFO)`,
      `TLS_KEY: ${paths.fifoLink} is not a regular file (a FIFO)`,
    ]);
  });
});
