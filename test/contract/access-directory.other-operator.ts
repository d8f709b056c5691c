import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDriverName } from '../../src/adapters/sqlite/driver.js';

/**
 * Another operator's `clients suspend CN`, made on a thread of its own through its own
 * connection to the store, as another process's would be: it runs while this thread is held
 * inside a store call (an `updateClient` change function), and this thread can wait for it
 * without turning its event loop. What it runs is the statement `setSuspended` runs.
 */
export interface OtherOperator {
  /** Starts suspending the client there, and returns at once. */
  suspend(id: string): void;
  /** Blocks this thread up to `ms` for the suspend to end; whether it ended (done or failed). */
  endedWithin(ms: number): boolean;
  /** Resolves when the suspend is done; rejects with its error when it failed. */
  done(): Promise<void>;
  close(): Promise<void>;
}

/** Where the other operator connects: a SQLite file, or a PostgreSQL database and schema. */
export type OtherOperatorStore =
  | {
      readonly engine: 'sqlite';
      readonly path: string;
      /** The driver this process opens the store with (`sqliteDriver().name`). */
      readonly driver: SqliteDriverName;
      readonly busyTimeoutMs: number;
    }
  | { readonly engine: 'postgres'; readonly url: string; readonly schema: string };

// Plain JavaScript, run as the worker's script on Node, Bun and Deno alike: SQLite through the
// driver the store is open with, waiting for a lock as the stores do (the same driver: two
// copies of SQLite in one process do not see each other's locks, its locks being the
// process's); PostgreSQL through pg, with the store's schema.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { store, ended } = workerData;
const state = new Int32Array(ended);
async function connect() {
  if (store.engine === 'sqlite') {
    const db =
      store.driver === 'better-sqlite3' ? new (require(workerData.modules['better-sqlite3']))(store.path)
      : store.driver === 'bun:sqlite' ? new (require('bun:sqlite').Database)(store.path)
      : new (require('node:sqlite').DatabaseSync)(store.path);
    db.exec('PRAGMA busy_timeout = ' + store.busyTimeoutMs);
    const statement = db.prepare('UPDATE clients SET suspended = 1 WHERE id = ?');
    return { suspend: async (id) => { statement.run(id); }, close: async () => db.close() };
  }
  const pg = require(workerData.modules.pg);
  const client = new pg.Client({ connectionString: store.url, options: '-c search_path=' + store.schema });
  await client.connect();
  return {
    suspend: async (id) => { await client.query('UPDATE clients SET suspended = true WHERE id = $1', [id]); },
    close: () => client.end(),
  };
}
connect().then(
  (db) => {
    parentPort.on('message', async (message) => {
      if (message.close) {
        await db.close();
        parentPort.postMessage({ closed: true });
        return;
      }
      let error;
      try {
        await db.suspend(message.suspend);
      } catch (e) {
        error = String(e && e.message);
      }
      Atomics.store(state, 0, 1);
      Atomics.notify(state, 0);
      parentPort.postMessage({ done: true, error });
    });
    parentPort.postMessage({ ready: true });
  },
  (e) => parentPort.postMessage({ ready: false, error: String(e && e.message) }),
);
`;

interface Reply {
  readonly ready?: boolean;
  readonly done?: boolean;
  readonly closed?: boolean;
  readonly error?: string;
}

/** Where the worker finds the packages it needs (resolved here: a worker's script resolves from nowhere). */
function modulesFor(store: OtherOperatorStore): Record<string, string> {
  const resolve = createRequire(import.meta.url).resolve;
  if (store.engine === 'postgres') return { pg: resolve('pg') };
  return store.driver === 'better-sqlite3' ? { 'better-sqlite3': resolve('better-sqlite3') } : {};
}

/** Starts the other operator's thread and connects it to `store`. */
export async function otherOperator(store: OtherOperatorStore): Promise<OtherOperator> {
  const ended = new SharedArrayBuffer(4);
  const state = new Int32Array(ended);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { store, ended, modules: modulesFor(store) },
  });
  const replies: Reply[] = [];
  const waiting: { resolve(reply: Reply): void; reject(error: unknown): void }[] = [];
  worker.on('message', (reply: Reply) => {
    const next = waiting.shift();
    if (next) next.resolve(reply);
    else replies.push(reply);
  });
  worker.on('error', (error) => {
    for (const next of waiting.splice(0)) next.reject(error);
  });
  const reply = () =>
    new Promise<Reply>((resolve, reject) => {
      const held = replies.shift();
      if (held) resolve(held);
      else waiting.push({ resolve, reject });
    });
  const ready = await reply();
  if (!ready.ready) {
    await worker.terminate();
    throw new Error(`the other operator cannot connect: ${ready.error}`);
  }
  let finished: Promise<Reply> | undefined;
  return {
    suspend(id) {
      Atomics.store(state, 0, 0);
      finished = reply();
      worker.postMessage({ suspend: id });
    },
    endedWithin: (ms) => Atomics.wait(state, 0, 0, ms) !== 'timed-out',
    async done() {
      const { error } = await (finished ?? Promise.reject(new Error('no suspend started')));
      if (error !== undefined) throw new Error(`the other operator's suspend failed: ${error}`);
    },
    async close() {
      const closed = reply();
      worker.postMessage({ close: true });
      await closed;
      await worker.terminate();
    },
  };
}
