// What the page shows around the builder: the open lesson (its guidance and the controls it
// hides) and the problem with a share link that could not be opened. Components reach it
// through Svelte context (usePageMode), so a component used alone hides nothing.
import { getContext, setContext } from 'svelte';
import { lessonById } from '../../share/lessons';
import type { Shared } from '../../share/link';

export interface ActiveLesson {
  id: string;
  title: string;
  /** One line about the lesson, shown in place of the preset's description (plain text). */
  summary: string;
  /** Short guidance (plain text). */
  guidance: string;
  /** The lesson's longer explanation, for lessons this page knows (plain text). */
  explanation: string | null;
  /** CONTROL_IDS names: builder sections ('model', 'prompts', 'rubric', 'judge') and GRPO option names. */
  hidden: readonly string[];
}

const KEY = Symbol('page-mode');

export class PageMode {
  lesson = $state.raw<ActiveLesson | null>(null);
  /** Why the share link in the address could not be opened (a ShareLinkError's message). */
  linkError = $state<string | null>(null);
  /** The opened link's rubric lineage (pin or allow, and where a pinned rubric came from); null for none. */
  lineage = $state.raw<Shared['rubric_lineage'] | null>(null);
  private readonly hidden = $derived(new Set(this.lesson?.hidden ?? []));

  /** Whether a control is hidden; a setting "a.b" is hidden with its group "a" too. */
  isHidden(control: string): boolean {
    return this.hidden.has(control) || this.hidden.has(control.split('.')[0]);
  }

  /** Enters the lesson a link or the lessons menu carries (or leaves lesson mode for none). */
  enter(shared: Shared): void {
    this.lineage = shared.rubric_lineage ?? null;
    const l = shared.lesson;
    if (!l) {
      this.lesson = null;
      return;
    }
    const known = lessonById(l.id);
    this.lesson = {
      id: l.id,
      title: l.title ?? known?.title ?? l.id,
      summary: known?.summary ?? 'A lesson from a share link: what to do is below.',
      guidance: l.guidance,
      explanation: known?.explanation ?? null,
      hidden: [...l.hidden_controls],
    };
  }

  leave(): void {
    this.lesson = null;
  }
}

export function providePageMode(mode: PageMode): void {
  setContext(KEY, mode);
}

/** The page's mode, or null outside the app (nothing hidden). */
export function usePageMode(): PageMode | null {
  return getContext<PageMode | undefined>(KEY) ?? null;
}
