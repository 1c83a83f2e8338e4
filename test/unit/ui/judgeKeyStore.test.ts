// The remote judge's key store: keys bound to the origin they were entered for, in memory and
// (only when remembered) in a Storage double; a key for one site is never handed out for another,
// whatever path, port or scheme the other URL has. And the consent hold: an experiment from a
// link, run file or lesson loses its remote judge until the visitor confirms it.
import { describe, expect, it } from 'vitest';
import { JUDGE_KEY_PREFIX, judgeKeyStorageKey, OriginKeyStore } from '../../../src/ui/lib/judgeKeyStore';
import { withholdRemoteJudge } from '../../../src/ui/lib/remoteJudgeConsent';

class MemoryStorage implements Storage {
  readonly items = new Map<string, string>();
  get length() {
    return this.items.size;
  }
  clear() {
    this.items.clear();
  }
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  key(i: number) {
    return [...this.items.keys()][i] ?? null;
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  setItem(key: string, value: string) {
    this.items.set(key, value);
  }
}

/** Storage that refuses every write (quota exceeded, blocked). */
class FullStorage extends MemoryStorage {
  override setItem(): void {
    throw new Error('the quota has been exceeded');
  }
}

const A = 'http://127.0.0.1:8001/v1/chat/completions';
const A_ORIGIN = 'http://127.0.0.1:8001';
const B = 'http://127.0.0.1:8002/v1/chat/completions';
const B_ORIGIN = 'http://127.0.0.1:8002';

describe('judge key store: one key per origin', () => {
  it('hands a key out only for URLs of the origin it was entered for', () => {
    const store = new OriginKeyStore(new MemoryStorage());
    store.set(A_ORIGIN, ' sk-a ', false);
    expect(store.forUrl(A)).toEqual({ origin: A_ORIGIN, key: 'sk-a' });
    // Same origin, another path: the same site.
    expect(store.forUrl('http://127.0.0.1:8001/other/v1')).toEqual({ origin: A_ORIGIN, key: 'sk-a' });
    // Another port, host, scheme, or a look-alike host: other sites, no key.
    for (const other of [B, 'https://127.0.0.1:8001/v1', 'http://localhost:8001/v1', 'http://127.0.0.1:8001.evil.example/v1', 'http://evil.example/?u=http://127.0.0.1:8001']) {
      expect(store.forUrl(other), other).toBeUndefined();
    }
    expect(store.forUrl('not a url')).toBeUndefined();
    expect(store.forUrl('file:///etc/passwd')).toBeUndefined();
    expect(store.get(B_ORIGIN)).toBe('');
    expect(store.otherOrigins(B_ORIGIN)).toEqual([A_ORIGIN]);
    expect(store.otherOrigins(A_ORIGIN)).toEqual([]);
  });

  it('keeps each origin its own key; an empty key forgets it', () => {
    const store = new OriginKeyStore(new MemoryStorage());
    store.set(A_ORIGIN, 'sk-a', false);
    store.set(B_ORIGIN, 'sk-b', false);
    expect(store.forUrl(A)?.key).toBe('sk-a');
    expect(store.forUrl(B)?.key).toBe('sk-b');
    store.set(A_ORIGIN, '  ', false);
    expect(store.forUrl(A)).toBeUndefined();
    expect(store.forUrl(B)?.key).toBe('sk-b');
  });

  it('remembers on the device per origin only when asked, and recalls it in a new page', () => {
    const storage = new MemoryStorage();
    const store = new OriginKeyStore(storage);
    store.set(A_ORIGIN, 'sk-a', false);
    expect(storage.items.size).toBe(0);
    expect(store.remember(A_ORIGIN, true)).toBeNull();
    expect(Object.fromEntries(storage.items)).toEqual({ [JUDGE_KEY_PREFIX + A_ORIGIN]: 'sk-a' });
    expect(store.isRemembered(A_ORIGIN)).toBe(true);
    expect(store.isRemembered(B_ORIGIN)).toBe(false);
    // Retyped while remembered: stored anew.
    store.set(A_ORIGIN, 'sk-a2', true);
    expect(storage.getItem(JUDGE_KEY_PREFIX + A_ORIGIN)).toBe('sk-a2');
    // A key for B, not remembered: not stored, not under A's entry either.
    store.set(B_ORIGIN, 'sk-b', false);
    expect([...storage.items.values()]).toEqual(['sk-a2']);

    // A new page: only A's remembered key comes back, and only for A.
    const next = new OriginKeyStore(storage);
    expect(next.forUrl(A)).toEqual({ origin: A_ORIGIN, key: 'sk-a2' });
    expect(next.forUrl(B)).toBeUndefined();
    expect(judgeKeyStorageKey(B)).toBe(JUDGE_KEY_PREFIX + B_ORIGIN);
    expect(judgeKeyStorageKey('javascript:alert(1)')).toBeNull();

    // Unticked: removed from the device, kept in the page's memory.
    expect(next.remember(A_ORIGIN, false)).toBeNull();
    expect(storage.items.size).toBe(0);
    expect(next.forUrl(A)?.key).toBe('sk-a2');
    expect(new OriginKeyStore(storage).forUrl(A)).toBeUndefined();
  });

  it('says when it cannot remember, and keeps the key in memory', () => {
    const store = new OriginKeyStore(new FullStorage());
    expect(store.set(A_ORIGIN, 'sk-a', true)).toMatch(/could not be remembered: the quota has been exceeded/);
    expect(store.forUrl(A)?.key).toBe('sk-a');
    const blocked = new OriginKeyStore(null);
    expect(blocked.set(A_ORIGIN, 'sk-a', true)).toMatch(/does not allow local storage/);
    expect(blocked.forUrl(A)?.key).toBe('sk-a');
    expect(blocked.forUrl(B)).toBeUndefined();
  });
});

describe('remote judge consent hold', () => {
  const experiment = { model: 'm', prompts: ['p'], judge: { kind: 'remote', url: B, model: 'judge-model' }, config: {} };

  it('takes a remote judge out of the experiment and holds it, with its URL and origin', () => {
    const { experiment: off, held } = withholdRemoteJudge(experiment, 'link');
    expect(off).toEqual({ model: 'm', prompts: ['p'], config: {} });
    expect(held).toEqual({ judge: experiment.judge, url: B, origin: B_ORIGIN, source: 'link' });
    // The input is untouched (the link's experiment is not mutated).
    expect(experiment.judge.kind).toBe('remote');
    expect(withholdRemoteJudge({ ...experiment, judge: { kind: 'remote', url: 'ftp://x', model: 'j' } }, 'file').held?.origin).toBeNull();
  });

  it('leaves any other judge where it is', () => {
    for (const judge of [undefined, { kind: 'rules' }, { kind: 'self' }, { kind: 'model', model: 'x' }]) {
      const e = { ...experiment, judge };
      const out = withholdRemoteJudge(e, 'lesson');
      expect(out.held).toBeNull();
      expect(out.experiment).toBe(e);
    }
  });
});
