// withRunLock: one holder per run; a second request is refused at once with RunLockedError;
// the lock is released whether the work succeeds or throws. Node has no Web Locks, so this
// exercises the in-memory fallback, plus the Web Locks call shape through a recording fake.
import { describe, expect, it } from 'vitest';
import { RunLockedError, defaultLocks, memoryLocks, runLockName, withRunLock, type LockManagerLike } from '../../../src/store';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('withRunLock (in-memory fallback)', () => {
  it('uses the fallback where navigator.locks is missing', () => {
    expect((globalThis as { navigator?: { locks?: unknown } }).navigator?.locks).toBeUndefined();
    expect(defaultLocks()).toBe(memoryLocks);
  });

  it('refuses a second holder of the same run while the first works, then frees the lock', async () => {
    const gate = deferred();
    const events: string[] = [];
    const first = withRunLock('r1', async () => {
      events.push('first start');
      await gate.promise;
      events.push('first end');
      return 'trained';
    });
    let secondRan = false;
    const second = withRunLock('r1', () => {
      secondRan = true;
    });
    await expect(second).rejects.toThrow(RunLockedError);
    await expect(second).rejects.toThrow('run "r1" is open in another tab or window, which holds its lock; stop or close it there, then try again');
    expect(secondRan).toBe(false);
    // Another run is independent.
    expect(await withRunLock('r2', () => 'other run')).toBe('other run');
    gate.resolve();
    expect(await first).toBe('trained');
    expect(events).toEqual(['first start', 'first end']);
    expect(await withRunLock('r1', () => 'after release')).toBe('after release');
  });

  it('releases the lock when the work throws, and passes the error through', async () => {
    await expect(withRunLock('r3', () => Promise.reject(new Error('step failed')))).rejects.toThrow('step failed');
    await expect(withRunLock('r3', () => { throw new TypeError('sync failure'); })).rejects.toThrow(TypeError);
    expect(await withRunLock('r3', () => 7)).toBe(7);
  });

  it('carries the run id on the error', async () => {
    const gate = deferred();
    const held = withRunLock('r4', () => gate.promise);
    const err = await withRunLock('r4', () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunLockedError);
    expect((err as RunLockedError).runId).toBe('r4');
    expect((err as Error).name).toBe('RunLockedError');
    gate.resolve();
    await held;
  });

  it('refuses an empty run id', async () => {
    await expect(withRunLock('', () => 1)).rejects.toThrow(/runId must be a non-empty string/);
  });
});

describe('withRunLock (Web Locks)', () => {
  it("asks for 'run:<id>' with ifAvailable and treats a null lock as held elsewhere", async () => {
    const requests: { name: string; options: unknown }[] = [];
    let available = true;
    const locks: LockManagerLike = {
      async request(name, options, callback) {
        requests.push({ name, options });
        return callback(available ? { name, mode: 'exclusive' } : null);
      },
    };
    expect(await withRunLock('abc', () => 'ok', { locks })).toBe('ok');
    available = false;
    await expect(withRunLock('abc', () => 'not run', { locks })).rejects.toThrow(RunLockedError);
    expect(requests).toEqual([
      { name: 'run:abc', options: { ifAvailable: true } },
      { name: 'run:abc', options: { ifAvailable: true } },
    ]);
    expect(runLockName('abc')).toBe('run:abc');
  });

  it('prefers navigator.locks when the environment has it', () => {
    const fake = { request: () => Promise.resolve() };
    const g = globalThis as { navigator?: unknown };
    const saved = Object.getOwnPropertyDescriptor(g, 'navigator');
    Object.defineProperty(g, 'navigator', { value: { locks: fake }, configurable: true });
    try {
      expect(defaultLocks()).toBe(fake);
    } finally {
      if (saved) Object.defineProperty(g, 'navigator', saved);
      else delete g.navigator;
    }
    expect(defaultLocks()).toBe(memoryLocks);
  });
});
