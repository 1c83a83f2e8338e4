// The lesson path: every lesson once, in a fixed order, with previous / next at the right places;
// one "Try this" action per lesson that names only controls the lesson leaves visible; progress
// kept across visits and credited to the lesson a run was trained in.
import { describe, expect, it } from 'vitest';
import { LESSON_PATH, TRY_THIS, lessonsInOrder, placeOnPath, tryThis } from '../../../src/share/lessonPath';
import { LESSONS, lessonById } from '../../../src/share/lessons';
import { ALL_OPTIONS } from '../../../src/ui/lib/settingsCatalog';
import { LESSON_PROGRESS_KEY, LessonRunTracker, markLessonDone, readLessonsDone, type ProgressStorage } from '../../../src/ui/lib/lessonProgress';

function memoryStorage(initial: Record<string, string> = {}): ProgressStorage & { data: Record<string, string> } {
  const data = { ...initial };
  return { data, getItem: (k) => data[k] ?? null, setItem: (k, v) => void (data[k] = v) };
}

describe('the lesson path', () => {
  it('holds every lesson exactly once', () => {
    expect([...LESSON_PATH].sort()).toEqual(LESSONS.map((l) => l.id).sort());
    expect(new Set(LESSON_PATH).size).toBe(LESSON_PATH.length);
    expect(lessonsInOrder().map((l) => l.id)).toEqual([...LESSON_PATH]);
  });

  it('starts with the basics and keeps each lesson\'s variants right after it', () => {
    expect(LESSON_PATH[0]).toBe('grpo-basics');
    // Lessons of the same issue-5 number are adjacent, and numbers never go back.
    const numbers = LESSON_PATH.map((id) => lessonById(id)!.number);
    for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeGreaterThanOrEqual(numbers[i - 1]);
  });

  it('gives "k of n" with previous and next', () => {
    const n = LESSON_PATH.length;
    const first = placeOnPath(LESSON_PATH[0])!;
    expect(first).toMatchObject({ number: 1, total: n, previous: null });
    expect(first.next?.id).toBe(LESSON_PATH[1]);
    const middle = placeOnPath(LESSON_PATH[3])!;
    expect(middle.number).toBe(4);
    expect(middle.previous?.id).toBe(LESSON_PATH[2]);
    expect(middle.next?.id).toBe(LESSON_PATH[4]);
    const last = placeOnPath(LESSON_PATH[n - 1])!;
    expect(last).toMatchObject({ number: n, total: n, next: null });
    expect(last.previous?.id).toBe(LESSON_PATH[n - 2]);
  });

  it('has no place for a lesson it does not know (a link\'s own lesson)', () => {
    expect(placeOnPath('my-own-lesson')).toBeNull();
    expect(tryThis('my-own-lesson')).toBeNull();
  });
});

describe('"Try this"', () => {
  const settingKeys = new Set(ALL_OPTIONS.map((o) => o.key.replace(/^reward_aggregation\./, '')));

  it.each(LESSON_PATH.map((id) => [id]))('%s has an action that uses only its visible settings', (id) => {
    const text = tryThis(id)!;
    expect(text.length).toBeGreaterThan(30);
    // An action to take, not a promised result.
    expect(text).toMatch(/^(Train|Set|Press|Open)\b/);
    expect(text).not.toMatch(/\b(should|will)\b/);
    const hidden = new Set(lessonById(id)!.shared.lesson!.hidden_controls);
    const named = (text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? []).filter((w) => settingKeys.has(w));
    for (const setting of named) expect(hidden.has(setting), `${id} asks to change the hidden ${setting}`).toBe(false);
  });

  it('covers no lesson outside the path', () => {
    expect(Object.keys(TRY_THIS).sort()).toEqual([...LESSON_PATH].sort());
  });
});

describe('lesson progress', () => {
  it('remembers done lessons across visits and ignores a foreign value', () => {
    const storage = memoryStorage();
    let done = readLessonsDone(storage);
    expect(done.size).toBe(0);
    done = markLessonDone(storage, done, 'clipping');
    done = markLessonDone(storage, done, 'clipping');
    expect([...readLessonsDone(storage)]).toEqual(['clipping']);
    expect(readLessonsDone(memoryStorage({ [LESSON_PROGRESS_KEY]: '{"not":"a list"}' })).size).toBe(0);
    expect(readLessonsDone(memoryStorage({ [LESSON_PROGRESS_KEY]: 'not json' })).size).toBe(0);
    expect([...readLessonsDone(memoryStorage({ [LESSON_PROGRESS_KEY]: '["a", 3, null]' }))]).toEqual(['a']);
    expect(readLessonsDone(null).size).toBe(0);
  });

  it('keeps progress for the page when storage refuses to write', () => {
    const refusing: ProgressStorage = { getItem: () => null, setItem: () => { throw new Error('QuotaExceededError'); } };
    expect([...markLessonDone(refusing, new Set(), 'grpo-basics')]).toEqual(['grpo-basics']);
  });

  it('credits a run to the lesson open when it started, only once it took a step', () => {
    const t = new LessonRunTracker();
    expect(t.observe('grpo-basics', null, 0)).toBeNull(); // no run yet
    expect(t.observe('grpo-basics', 'run-1', 0)).toBeNull(); // loading: no step
    expect(t.observe('grpo-basics', 'run-1', 1)).toBe('grpo-basics');
    // Next opens another lesson while run-1's steps are still on screen: still the first lesson's.
    expect(t.observe('reward-hacking', 'run-1', 2)).toBe('grpo-basics');
    expect(t.observe('reward-hacking', 'run-2', 1)).toBe('reward-hacking');
    // A run started outside any lesson never counts for one opened later.
    expect(t.observe(null, 'run-3', 0)).toBeNull();
    expect(t.observe('clipping', 'run-3', 5)).toBeNull();
  });
});
