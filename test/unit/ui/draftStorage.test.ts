import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DraftSaver, draftStorageKey, loadDraft, saveDraft, withoutSecrets, type DraftStorage } from '../../../src/ui/lib/draftStorage';

class FakeStorage implements DraftStorage {
  readonly map = new Map<string, string>();
  full = false;
  writes = 0;
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    if (this.full) throw new DOMException('quota', 'QuotaExceededError');
    this.writes++;
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

const experiment = {
  model: 'embedded',
  prompts: ['Say hi.'],
  rubric: { name: 'r', criteria: [{ id: 'a', text: 'Says hi', weight: 1 }] },
  judge: { kind: 'remote', url: 'https://judge.example/v1', model: 'm', apiKey: 'sk-SECRET', api_key: 'sk-SECRET2', token: 't' },
  config: { temperature: 0.7 },
};

describe('draft storage', () => {
  it('round-trips the draft under a per-path key, never with a key-like judge field', () => {
    const s = new FakeStorage();
    const key = draftStorageKey('/sub/');
    expect(key).not.toBe(draftStorageKey('/'));
    expect(saveDraft(s, key, 'first-visit', experiment, 5)).toBe(true);
    expect(s.map.get(key)).not.toContain('SECRET');
    expect(s.map.get(key)).not.toContain('"token"');
    const back = loadDraft(s, key)!;
    expect(back.preset).toBe('first-visit');
    expect(back.saved_at).toBe(5);
    expect(back.experiment).toEqual({ ...experiment, judge: { kind: 'remote', url: 'https://judge.example/v1', model: 'm' } });
  });

  it('a key planted in the stored text is dropped on load too', () => {
    const s = new FakeStorage();
    s.setItem('k', JSON.stringify({ version: 1, preset: 'p', experiment: { judge: { kind: 'remote', apiKey: 'x' } }, saved_at: 1 }));
    expect(loadDraft(s, 'k')!.experiment).toEqual({ judge: { kind: 'remote' } });
    expect(withoutSecrets({ model: 'a' })).toEqual({ model: 'a' });
  });

  it('ignores missing, corrupt and other-version entries', () => {
    const s = new FakeStorage();
    expect(loadDraft(s, 'k')).toBeNull();
    s.setItem('k', '{not json');
    expect(loadDraft(s, 'k')).toBeNull();
    s.setItem('k', JSON.stringify({ version: 99, preset: 'p', experiment: {} }));
    expect(loadDraft(s, 'k')).toBeNull();
    s.setItem('k', JSON.stringify({ version: 1, preset: 'p', experiment: [] }));
    expect(loadDraft(s, 'k')).toBeNull();
    expect(loadDraft(null, 'k')).toBeNull();
  });

  it('reports a refused write instead of throwing', () => {
    const s = new FakeStorage();
    s.full = true;
    expect(saveDraft(s, 'k', 'p', experiment)).toBe(false);
    expect(saveDraft(null, 'k', 'p', experiment)).toBe(false);
  });
});

describe('DraftSaver', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('writes once after a burst of edits, and is not persisted while a write waits', () => {
    const s = new FakeStorage();
    const saver = new DraftSaver(s, 'k', 400);
    expect(saver.persisted).toBe(true);
    for (let i = 0; i < 5; i++) {
      saver.schedule('p', { ...experiment, prompts: [`p${i}`] });
      vi.advanceTimersByTime(100);
    }
    expect(saver.persisted).toBe(false);
    expect(s.writes).toBe(0);
    vi.advanceTimersByTime(400);
    expect(s.writes).toBe(1);
    expect(saver.persisted).toBe(true);
    expect(loadDraft(s, 'k')!.experiment.prompts).toEqual(['p4']);
  });

  it('flush writes a waiting draft at once (page hidden or closing); clear drops it and the stored one', () => {
    const s = new FakeStorage();
    const told: boolean[] = [];
    const saver = new DraftSaver(s, 'k', 400, (ok) => told.push(ok));
    saver.schedule('p', experiment);
    expect(saver.flush()).toBe(true);
    expect(s.writes).toBe(1);
    expect(told).toEqual([true]);
    vi.advanceTimersByTime(1000);
    expect(s.writes).toBe(1);
    saver.schedule('p', { model: 'other' });
    saver.clear();
    vi.advanceTimersByTime(1000);
    expect(loadDraft(s, 'k')).toBeNull();
    expect(saver.persisted).toBe(true);
  });

  it('stays unpersisted after a refused write, so leaving asks', () => {
    const s = new FakeStorage();
    s.full = true;
    const saver = new DraftSaver(s, 'k', 400);
    saver.schedule('p', experiment);
    expect(saver.flush()).toBe(false);
    expect(saver.failed).toBe(true);
    s.full = false;
    saver.schedule('p', experiment);
    expect(saver.flush()).toBe(true);
  });
});
