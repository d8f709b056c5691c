import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type NamedCertificate, type TlsSource, watchTls } from '../../src/app/tls-reload.js';

/** A fake set whose `reload` reads its one file and refuses the contents `bad`. */
function sourceOver(file: string) {
  const loaded: string[] = [];
  const source: TlsSource = {
    name: 'server',
    files: [file],
    reload: (): NamedCertificate[] => {
      const text = readFileSync(file, 'utf8');
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
  it('loads a change once it has read the same twice, and only once', () => {
    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'one');
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record);
    watch.poll();
    expect(loaded).toEqual([]);
    writeFileSync(file, 'tw');
    watch.poll(); // seen once: maybe half-written
    expect(loaded).toEqual([]);
    writeFileSync(file, 'two');
    watch.poll(); // changed again since the last read
    expect(loaded).toEqual([]);
    watch.poll(); // the same twice in a row
    expect(loaded).toEqual(['two']);
    watch.poll();
    expect(loaded).toEqual(['two']);
    expect(events).toEqual(['reloaded file']);
    watch.stop();
  });

  it('follows the symlink swap of a mounted secret', () => {
    // Kubernetes: cert.pem -> ..data/cert.pem, and ..data -> a versioned directory, swapped by rename.
    for (const version of ['v1', 'v2']) {
      mkdirSync(join(dir, version));
      writeFileSync(join(dir, version, 'cert.pem'), `certificate ${version}`);
    }
    symlinkSync('v1', join(dir, '..data'));
    symlinkSync(join('..data', 'cert.pem'), join(dir, 'cert.pem'));
    const { source, loaded } = sourceOver(join(dir, 'cert.pem'));
    const watch = watchTls([source], 0, record);
    symlinkSync('v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    watch.poll();
    watch.poll();
    expect(loaded).toEqual(['certificate v2']);
    watch.stop();
  });

  it('refuses a bad set once, keeps it refused until it changes, and tries it again on SIGHUP', () => {
    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'one');
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record);
    writeFileSync(file, 'bad');
    for (let i = 0; i < 4; i++) watch.poll();
    expect(events).toEqual(['failed file: TLS_CERT: holds no PEM certificate']);
    watch.reloadAll();
    expect(events.at(-1)).toBe('failed SIGHUP: TLS_CERT: holds no PEM certificate');
    writeFileSync(file, 'three');
    watch.poll();
    watch.poll();
    expect(loaded).toEqual(['three']);
    watch.stop();
  });

  it('reads a change of mode alone as a change (a key made readable by others is tried, and refused)', () => {
    const file = join(dir, 'key.pem');
    writeFileSync(file, 'one', { mode: 0o600 });
    chmodSync(file, 0o600);
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record);
    chmodSync(file, 0o644);
    watch.poll();
    watch.poll();
    expect(loaded).toEqual(['one']);
    expect(events).toEqual(['reloaded file']);
    watch.poll();
    expect(events).toEqual(['reloaded file']);
    watch.stop();
  });

  it('reads a missing file as a change, and does not load it', () => {
    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'one');
    const { source, loaded } = sourceOver(file);
    const watch = watchTls([source], 0, record);
    rmSync(file);
    watch.poll();
    watch.poll();
    expect(loaded).toEqual([]);
    expect(events[0]).toMatch(/^failed file: /);
    watch.stop();
  });
});
