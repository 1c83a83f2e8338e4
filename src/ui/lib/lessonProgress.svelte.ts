// The page's lesson progress (reactive): which lessons are done, updated as runs take steps.
import { LessonRunTracker, markLessonDone, readLessonsDone, type ProgressStorage } from './lessonProgress';

function pageStorage(): ProgressStorage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null; // storage blocked by the browser's settings
  }
}

export class LessonProgress {
  private readonly storage = pageStorage();
  private readonly tracker = new LessonRunTracker();
  done = $state.raw<ReadonlySet<string>>(readLessonsDone(this.storage));

  /** The open lesson (null: none), the run training in the page (null: none, or a run only shown) and its steps. */
  observe(lessonId: string | null, runId: string | null, steps: number): void {
    const lesson = this.tracker.observe(lessonId, runId, steps);
    if (lesson !== null && !this.done.has(lesson)) this.done = markLessonDone(this.storage, this.done, lesson);
  }
}
