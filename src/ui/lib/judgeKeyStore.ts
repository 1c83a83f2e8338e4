// The remote judge's API keys, each bound to the origin (scheme, host, port) it was entered for:
// held in this page's memory per origin, and in localStorage (one entry per origin) only for the
// origins where the user ticked "remember on this device". A key is only ever handed out for a
// URL of its own origin, so changing the judge's URL (by hand, by a share link, by an imported
// run) never carries a key to another site. Plain TypeScript (no runes): the picker's reactive
// holder (judgeKey.svelte.ts) wraps it, and Node tests drive it with a fake Storage.
import { httpOrigin, type OriginBoundKey } from '../../rubric/judges/remote';

export const JUDGE_KEY_PREFIX = 'rubric-playground.judge-key:';

/** The localStorage key for a judge URL's origin; null when the URL is not a valid http(s) URL. */
export function judgeKeyStorageKey(url: string): string | null {
  const origin = httpOrigin(url);
  return origin === null ? null : JUDGE_KEY_PREFIX + origin;
}

/** localStorage, or null where the browser refuses it (private mode, blocked storage). */
export function defaultStorage(): Storage | null {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

export class OriginKeyStore {
  /** Keys typed (or recalled) in this page, by origin. */
  private readonly memory = new Map<string, string>();

  constructor(private readonly storage: Storage | null = defaultStorage()) {}

  /** The key for an origin: typed in this page, else remembered on this device; '' for none. */
  get(origin: string): string {
    const typed = this.memory.get(origin);
    if (typed !== undefined) return typed;
    const saved = this.read(origin);
    if (saved !== null) this.memory.set(origin, saved);
    return saved ?? '';
  }

  /** Whether this device remembers a key for the origin. */
  isRemembered(origin: string): boolean {
    return this.read(origin) !== null;
  }

  /** Origins other than `origin` that have a key in this page (for the picker's hint). */
  otherOrigins(origin: string | null): string[] {
    return [...this.memory].filter(([o, k]) => o !== origin && k !== '').map(([o]) => o);
  }

  /**
   * Sets the key for one origin ('' forgets it). When `remember`, it is stored for that origin
   * too; returns why storing failed (the key then stays in memory only), else null.
   */
  set(origin: string, value: string, remember: boolean): string | null {
    const key = value.trim();
    if (key === '') this.memory.delete(origin);
    else this.memory.set(origin, key);
    return remember ? this.store(origin) : null;
  }

  /** Stores (on) or removes (off) the origin's key on this device; returns why storing failed, else null. */
  remember(origin: string, on: boolean): string | null {
    if (on) return this.store(origin);
    try {
      this.storage?.removeItem(JUDGE_KEY_PREFIX + origin);
    } catch {
      // Nothing was stored where storage is blocked.
    }
    return null;
  }

  /** The key to send to `url`, with the origin it is bound to; undefined when none was entered for that origin. */
  forUrl(url: string): OriginBoundKey | undefined {
    const origin = httpOrigin(url);
    if (origin === null) return undefined;
    const key = this.get(origin);
    return key === '' ? undefined : { origin, key };
  }

  private read(origin: string): string | null {
    try {
      return this.storage?.getItem(JUDGE_KEY_PREFIX + origin) ?? null;
    } catch {
      return null;
    }
  }

  private store(origin: string): string | null {
    const slot = JUDGE_KEY_PREFIX + origin;
    try {
      if (!this.storage) throw new Error('this browser does not allow local storage here');
      const key = this.memory.get(origin) ?? '';
      if (key === '') this.storage.removeItem(slot);
      else this.storage.setItem(slot, key);
      return null;
    } catch (e) {
      return `The key could not be remembered: ${(e as Error).message}. It stays in this page's memory only.`;
    }
  }
}
