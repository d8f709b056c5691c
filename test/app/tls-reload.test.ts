import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readNamedFileAsync } from '../../src/adapters/shared/secret-files.js';
import { fileLooks } from '../../src/app/composition/certificate-watch.js';
import { type NamedCertificate, type TlsSource, watchTls } from '../../src/app/tls-reload.js';

/** A fake set whose `reload` reads its one file as a reload reads (without blocking) and refuses the contents `bad`. */
function sourceOver(file: string) {
  const loaded: string[] = [];
  const source: TlsSource = {
    name: 'server',
    files: [file],
    reload: async (): Promise<NamedCertificate[]> => {
      const text = await readNamedFileAsync('TLS_CERT', file, (message) => new Error(message));
      if (text.startsWith('bad')) throw new Error('TLS_CERT: holds no PEM certificate');
      loaded.push(text);
      return [{ certificate: 'server', subject: 'localhost', serialNumber: '01', notAfter: new Date(0) }];
    },
  };
  return { source, loaded };
}

let dir: string;
let events: string[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'case-read-reload-'));
  events = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const record = {
  reloaded: (_: TlsSource, __: readonly NamedCertificate[], trigger: string) =>
    events.push(`reloaded ${trigger}`),
  failed: (_: TlsSource, reason: string, trigger: string) => events.push(`failed ${trigger}: ${reason}`),
};

describe('watchTls', () => {
  it('loads a change once it has read the same twice, and only once', async () => {
    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'one');
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record, fileLooks);
    await watch.poll();
    expect(loaded).toEqual([]);
    writeFileSync(file, 'tw');
    await watch.poll(); // seen once: maybe half-written
    expect(loaded).toEqual([]);
    writeFileSync(file, 'two');
    await watch.poll(); // changed again since the last read
    expect(loaded).toEqual([]);
    await watch.poll(); // the same twice in a row
    expect(loaded).toEqual(['two']);
    await watch.poll();
    expect(loaded).toEqual(['two']);
    expect(events).toEqual(['reloaded file']);
    watch.stop();
  });

  it('follows the symlink swap of a mounted secret', async () => {
    // Kubernetes: cert.pem -> ..data/cert.pem, and ..data -> a versioned directory, swapped by rename.
    for (const version of ['v1', 'v2']) {
      mkdirSync(join(dir, version));
      writeFileSync(join(dir, version, 'cert.pem'), `certificate ${version}`);
    }
    symlinkSync('v1', join(dir, '..data'));
    symlinkSync(join('..data', 'cert.pem'), join(dir, 'cert.pem'));
    const { source, loaded } = sourceOver(join(dir, 'cert.pem'));
    const watch = watchTls([source], 0, record, fileLooks);
    symlinkSync('v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    await watch.poll();
    await watch.poll();
    expect(loaded).toEqual(['certificate v2']);
    watch.stop();
  });

  it('refuses a bad set once, keeps it refused until it changes, and tries it again on SIGHUP', async () => {
    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'one');
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record, fileLooks);
    writeFileSync(file, 'bad');
    for (let i = 0; i < 4; i++) await watch.poll();
    expect(events).toEqual(['failed file: TLS_CERT: holds no PEM certificate']);
    await watch.reloadAll();
    expect(events.at(-1)).toBe('failed SIGHUP: TLS_CERT: holds no PEM certificate');
    writeFileSync(file, 'three');
    await watch.poll();
    await watch.poll();
    expect(loaded).toEqual(['three']);
    watch.stop();
  });

  it('reads a change of mode alone as a change (a key made readable by others is tried, and refused)', async () => {
    const file = join(dir, 'key.pem');
    writeFileSync(file, 'one', { mode: 0o600 });
    chmodSync(file, 0o600);
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record, fileLooks);
    chmodSync(file, 0o644);
    await watch.poll();
    await watch.poll();
    expect(loaded).toEqual(['one']);
    expect(events).toEqual(['reloaded file']);
    await watch.poll();
    expect(events).toEqual(['reloaded file']);
    watch.stop();
  });

  it('reads a missing file as a change, and does not load it', async () => {
    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'one');
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record, fileLooks);
    rmSync(file);
    await watch.poll();
    await watch.poll();
    expect(loaded).toEqual([]);
    expect(events[0]).toMatch(/^failed file: /);
    watch.stop();
  });

  it('sees a FIFO put in a file’s place as what it is, never waiting on it; the set refused, then the file put back loaded', async () => {
    const file = join(dir, 'key.pem');
    writeFileSync(file, 'one', { mode: 0o600 });
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record, fileLooks);
    rmSync(file);
    expect(spawnSync('mkfifo', [file]).status).toBe(0);
    await watch.poll();
    await watch.poll();
    expect(events).toEqual([`failed file: TLS_CERT: ${file} is not a regular file (a FIFO)`]);
    await watch.poll();
    expect(events).toHaveLength(1);
    rmSync(file);
    writeFileSync(file, 'two', { mode: 0o600 });
    await watch.poll();
    await watch.poll();
    expect(loaded).toEqual(['two']);
    expect(events.at(-1)).toBe('reloaded file');
    watch.stop();
  });

  it('runs one poll or reload at a time: a SIGHUP while a reload is under way waits its turn', async () => {
    // Files held in memory: no I/O, so once the microtasks have run (setImmediate) all that
    // could have started has.
    let contents = 'one';
    const looks = { now: () => contents, read: async () => contents };
    const started: string[] = [];
    const releases: (() => void)[] = [];
    const source: TlsSource = {
      name: 'server',
      files: ['cert.pem'],
      reload: () => {
        started.push(contents);
        return new Promise((resolve) => releases.push(() => resolve([])));
      },
    };
    const settled = () => new Promise((resolve) => setImmediate(resolve));
    const watch = watchTls([source], 0, record, looks);
    contents = 'two';
    await watch.poll();
    const polled = watch.poll();
    await settled();
    expect(started).toEqual(['two']);
    // The poll's reload is under way: the SIGHUP's waits for it.
    const sighup = watch.reloadAll();
    await settled();
    expect(started).toEqual(['two']);
    releases[0]?.();
    await polled;
    await settled();
    expect(started).toEqual(['two', 'two']);
    releases[1]?.();
    await sighup;
    expect(events).toEqual(['reloaded file', 'reloaded SIGHUP']);
    watch.stop();
  });
});
