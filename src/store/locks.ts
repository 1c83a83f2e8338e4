// One writer per run: a tab (or worker) that trains or edits a run holds the Web Lock
// 'run:<id>' for as long as it works on it; a second tab asking for the same run is told at
// once that the run is busy instead of waiting or interleaving its writes. Locks are released
// when the callback settles or the holder's tab closes (the browser does that, even on crash).
// Without Web Locks (Node, old browsers) an in-memory lock gives the same semantics within
// one JavaScript realm.
import { RunLockedError } from './errors';

/** The part of the Web Locks API used here (navigator.locks satisfies it). */
export interface LockManagerLike {
  request<T>(name: string, options: { ifAvailable: true }, callback: (lock: unknown) => Promise<T> | T): Promise<T>;
}

const held = new Set<string>();

/** Web Locks' `ifAvailable` semantics for a single realm: the callback gets null when the name is held. */
export const memoryLocks: LockManagerLike & { query(): Promise<{ held: { name: string }[] }> } = {
  /** Like navigator.locks.query(): the names held now. */
  async query() {
    return { held: [...held].map((name) => ({ name })) };
  },
  async request<T>(name: string, _options: { ifAvailable: true }, callback: (lock: unknown) => Promise<T> | T): Promise<T> {
    if (held.has(name)) return callback(null);
    held.add(name);
    try {
      return await callback({ name, mode: 'exclusive' });
    } finally {
      held.delete(name);
    }
  },
};

/** navigator.locks where the environment has it (pages and workers), else the in-memory fallback. */
export function defaultLocks(): LockManagerLike {
  const nav = (globalThis as { navigator?: { locks?: unknown } }).navigator;
  return nav?.locks ? (nav.locks as LockManagerLike) : memoryLocks;
}

export const runLockName = (runId: string): string => `run:${runId}`;

/**
 * Runs `fn` while holding the run's exclusive lock and returns its result; the lock is released
 * when `fn` settles. Throws RunLockedError at once (without calling `fn`) when another tab,
 * window, worker or caller in this realm holds it.
 */
export async function withRunLock<T>(runId: string, fn: () => Promise<T> | T, options: { locks?: LockManagerLike } = {}): Promise<T> {
  if (typeof runId !== 'string' || runId === '') throw new RangeError('withRunLock: runId must be a non-empty string');
  const locks = options.locks ?? defaultLocks();
  return locks.request(runLockName(runId), { ifAvailable: true }, async (lock) => {
    if (!lock) throw new RunLockedError(runId);
    return fn();
  });
}
