// Lesson progress: the lessons where the visitor trained at least one step, kept in
// localStorage so the lessons menu can mark them done on the next visit. Plain logic (no runes),
// so it is tested in Node; lessonProgress.svelte.ts makes it reactive for the page.

export const LESSON_PROGRESS_KEY = 'rubric-playground:lessons-done';

/** The part of Storage used here (localStorage, or a stand-in in tests). */
export type ProgressStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** The lessons marked done; a missing, unreadable or foreign value reads as none done. */
export function readLessonsDone(storage: ProgressStorage | null): Set<string> {
  try {
    const parsed: unknown = JSON.parse(storage?.getItem(LESSON_PROGRESS_KEY) ?? '[]');
    return new Set(Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string' && x.length <= 100) : []);
  } catch {
    return new Set();
  }
}

/** Marks a lesson done and returns the new set (unchanged storage when it already was, or when storage refuses). */
export function markLessonDone(storage: ProgressStorage | null, done: ReadonlySet<string>, id: string): Set<string> {
  const next = new Set(done).add(id);
  if (next.size !== done.size) {
    try {
      storage?.setItem(LESSON_PROGRESS_KEY, JSON.stringify([...next]));
    } catch {
      // Private mode or a full quota: progress lasts for this page only.
    }
  }
  return next;
}

/**
 * Which lesson a run belongs to: the one open when the run first appeared. A run trained in lesson
 * A still on screen after Next opens lesson B stays A's, so B is not marked done by A's steps.
 */
export class LessonRunTracker {
  private readonly owner = new Map<string, string | null>();

  /** Called whenever the open lesson, the training run or its step count changes; returns the lesson to mark done, if any. */
  observe(lessonId: string | null, runId: string | null, steps: number): string | null {
    if (runId === null) return null;
    if (!this.owner.has(runId)) this.owner.set(runId, lessonId);
    const owner = this.owner.get(runId) ?? null;
    return owner !== null && steps > 0 ? owner : null;
  }
}
