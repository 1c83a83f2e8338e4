// The remote judge's API key: held in this page's memory, and in localStorage (one entry per URL
// origin) only while the user ticks "remember on this device". It is handed to the trainer
// worker when a run opens and is never part of the experiment, a share link, an export or a
// rollout (the experiment schema rejects key fields anyway).

export const JUDGE_KEY_PREFIX = 'rubric-playground.judge-key:';

/** The localStorage key for a judge URL's origin; null when the URL is not a valid http(s) URL. */
export function judgeKeyStorageKey(url: string): string | null {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    return JUDGE_KEY_PREFIX + parsed.origin;
  } catch {
    return null;
  }
}

/** localStorage, or null where the browser refuses it (private mode, blocked storage). */
function defaultStorage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

export class JudgeApiKey {
  /** The key as typed (or recalled). */
  value = $state('');
  /** Whether the key is kept in this browser's localStorage for the current URL's origin. */
  remember = $state(false);
  /** Why remembering failed (storage full or blocked), for the picker. */
  error = $state<string | null>(null);
  /** The localStorage entry of the current URL's origin (null: no valid URL yet). */
  private slot: string | null = null;

  constructor(private readonly storage: Storage | null = defaultStorage()) {}

  /**
   * Follows the judge URL: a key remembered for the new origin is filled in; otherwise the typed
   * key stays in memory but is not remembered for the new origin until the box is ticked again.
   */
  follow(url: string): void {
    const storageKey = judgeKeyStorageKey(url);
    if (storageKey === this.slot) return;
    this.slot = storageKey;
    const saved = storageKey ? this.read(storageKey) : null;
    if (saved !== null) {
      this.value = saved;
      this.remember = true;
    } else {
      this.remember = false;
    }
  }

  /** A new key typed in: kept in memory, and stored when remembering for this origin. */
  set(value: string): void {
    this.value = value;
    if (this.remember) this.store();
  }

  /** Ticks or unticks "remember on this device": stores the key, or removes the stored one. */
  setRemember(on: boolean): void {
    if (on && !this.slot) {
      this.remember = false;
      this.error = 'Enter the endpoint URL first: a key is remembered for one site.';
      return;
    }
    this.remember = on;
    this.error = null;
    if (on) this.store();
    else if (this.slot) this.remove(this.slot);
  }

  /** The key to hand to the trainer; undefined when none was entered. */
  forRun(): string | undefined {
    const key = this.value.trim();
    return key === '' ? undefined : key;
  }

  private read(storageKey: string): string | null {
    try {
      return this.storage?.getItem(storageKey) ?? null;
    } catch {
      return null;
    }
  }

  private store(): void {
    if (!this.slot) return;
    try {
      if (!this.storage) throw new Error('this browser does not allow local storage here');
      if (this.value.trim() === '') this.storage.removeItem(this.slot);
      else this.storage.setItem(this.slot, this.value.trim());
      this.error = null;
    } catch (e) {
      this.remember = false;
      this.error = `The key could not be remembered: ${(e as Error).message}. It stays in this page's memory only.`;
    }
  }

  private remove(storageKey: string): void {
    try {
      this.storage?.removeItem(storageKey);
    } catch {
      // Nothing was stored where storage is blocked.
    }
  }
}
