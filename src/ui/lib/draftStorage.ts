// The builder's draft kept across reloads and closed tabs: one localStorage entry per page path,
// written a moment after each edit (debounced) and at once when the page is hidden or closed.
// Never the judge's API key: that lives in judgeKeyStore (per origin, only when asked to
// remember), and any key-like field in the judge is dropped here too, whatever put it there.
// Plain TypeScript so Node tests drive it with a fake Storage and fake timers.

export const DRAFT_PREFIX = 'rubric-playground.draft:';
export const DRAFT_VERSION = 1;
/** How long after the last edit the draft is written. */
export const DRAFT_SAVE_DELAY_MS = 400;

/** The part of Storage this needs (localStorage, or a fake in tests). */
export type DraftStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export interface SavedDraft {
  version: typeof DRAFT_VERSION;
  /** The preset the draft started from ("Reset to preset" goes back to it). */
  preset: string;
  experiment: Record<string, unknown>;
  /** When it was written (ms since the epoch). */
  saved_at: number;
}

/** The entry for a page path: two deploys under different sub-paths of one origin keep their own drafts. */
export function draftStorageKey(pathname: string): string {
  return DRAFT_PREFIX + (pathname || '/');
}

const SECRET = /key|token|secret|password|authorization/i;

/** The experiment without any key-like field in its judge (apiKey, api_key, token, …). */
export function withoutSecrets(experiment: Record<string, unknown>): Record<string, unknown> {
  const judge = experiment.judge;
  if (!judge || typeof judge !== 'object' || Array.isArray(judge)) return experiment;
  const clean = Object.fromEntries(Object.entries(judge as Record<string, unknown>).filter(([k]) => !SECRET.test(k)));
  return { ...experiment, judge: clean };
}

/** Writes the draft; false when the browser refused (storage full, blocked, private mode). */
export function saveDraft(storage: DraftStorage | null, key: string, preset: string, experiment: Record<string, unknown>, now = Date.now()): boolean {
  if (!storage) return false;
  const saved: SavedDraft = { version: DRAFT_VERSION, preset, experiment: withoutSecrets(experiment), saved_at: now };
  try {
    storage.setItem(key, JSON.stringify(saved));
    return true;
  } catch {
    return false;
  }
}

/** The saved draft, or null when there is none or it cannot be read (then it is left alone, not trusted). */
export function loadDraft(storage: DraftStorage | null, key: string): SavedDraft | null {
  let text: string | null;
  try {
    text = storage?.getItem(key) ?? null;
  } catch {
    return null;
  }
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Partial<SavedDraft>;
    if (v?.version !== DRAFT_VERSION || typeof v.preset !== 'string' || !v.experiment || typeof v.experiment !== 'object' || Array.isArray(v.experiment)) return null;
    return { version: DRAFT_VERSION, preset: v.preset, experiment: withoutSecrets(v.experiment), saved_at: Number(v.saved_at) || 0 };
  } catch {
    return null;
  }
}

export function clearDraft(storage: DraftStorage | null, key: string): void {
  try {
    storage?.removeItem(key);
  } catch {
    // Nothing to clear where storage is blocked.
  }
}

/**
 * Debounced writer: `schedule` after each edit, `flush` when the page hides. `persisted` says
 * whether the latest draft is stored (false while a write waits, or when the last one failed):
 * only then does leaving the page need to ask.
 */
export class DraftSaver {
  #timer: ReturnType<typeof setTimeout> | null = null;
  #pending: { preset: string; experiment: Record<string, unknown> } | null = null;
  #failed = false;

  constructor(
    private readonly storage: DraftStorage | null,
    private readonly key: string,
    private readonly delayMs = DRAFT_SAVE_DELAY_MS,
    /** Told after each write whether it was stored (the page warns while it is not). */
    private readonly onwrite: (stored: boolean) => void = () => {},
  ) {}

  get persisted(): boolean {
    return this.#pending === null && !this.#failed;
  }

  /** Whether the last write failed (the page says so: the draft would be lost on close). */
  get failed(): boolean {
    return this.#failed;
  }

  schedule(preset: string, experiment: Record<string, unknown>): void {
    this.#pending = { preset, experiment };
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.flush(), this.delayMs);
  }

  /** Writes a waiting draft now; returns whether everything is stored. */
  flush(): boolean {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const p = this.#pending;
    if (p) {
      this.#failed = !saveDraft(this.storage, this.key, p.preset, p.experiment);
      this.#pending = null;
      this.onwrite(!this.#failed);
    }
    return this.persisted;
  }

  /** Drops a waiting write and the stored draft ("Reset to preset": the preset is what opens next time). */
  clear(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#pending = null;
    this.#failed = false;
    clearDraft(this.storage, this.key);
  }
}
