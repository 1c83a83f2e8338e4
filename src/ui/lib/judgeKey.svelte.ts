// The remote judge's API key as the picker shows it: the key of the judge URL's origin (scheme,
// host, port). Keys are held per origin (OriginKeyStore: this page's memory, and localStorage only
// where "remember on this device" is ticked); a new URL of another origin shows that origin's key,
// or an empty field asking for one, never the key typed for the previous site. The key is handed
// to the trainer worker with its origin when a run opens and is never part of the experiment, a
// share link, an export or a rollout (the experiment schema rejects key fields anyway).
import { httpOrigin, type OriginBoundKey } from '../../rubric/judges/remote';
import { defaultStorage, OriginKeyStore } from './judgeKeyStore';

export { JUDGE_KEY_PREFIX, judgeKeyStorageKey } from './judgeKeyStore';

export class JudgeApiKey {
  /** The origin of the judge URL the picker shows (null: no valid http(s) URL yet). */
  origin = $state<string | null>(null);
  /** The key of that origin, as typed (or recalled). */
  value = $state('');
  /** Whether the key is kept in this browser's localStorage for that origin. */
  remember = $state(false);
  /** Why remembering failed (storage full or blocked), or why a key cannot be typed yet. */
  error = $state<string | null>(null);
  /** Other sites that have a key in this page: theirs is never sent to this one. */
  elsewhere = $state<string[]>([]);
  private readonly store: OriginKeyStore;

  constructor(storage: Storage | null = defaultStorage()) {
    this.store = new OriginKeyStore(storage);
  }

  /** Follows the judge URL: shows the key of its origin (typed in this page or remembered), else none. */
  follow(url: string): void {
    const origin = httpOrigin(url);
    if (origin === this.origin) return;
    this.origin = origin;
    this.value = origin === null ? '' : this.store.get(origin);
    this.remember = origin !== null && this.store.isRemembered(origin);
    this.error = null;
    this.elsewhere = this.store.otherOrigins(origin);
  }

  /** A key typed for the current origin: kept in memory, and stored when remembering for it. */
  set(value: string): void {
    if (this.origin === null) {
      this.error = 'Enter the endpoint URL first: a key is bound to the one site it is entered for.';
      return;
    }
    this.value = value;
    this.error = this.store.set(this.origin, value, this.remember);
    if (this.error !== null) this.remember = false;
  }

  /** Ticks or unticks "remember on this device" for the current origin: stores its key, or removes it. */
  setRemember(on: boolean): void {
    if (on && this.origin === null) {
      this.remember = false;
      this.error = 'Enter the endpoint URL first: a key is remembered for one site.';
      return;
    }
    if (this.origin === null) return;
    this.error = this.store.remember(this.origin, on);
    this.remember = on && this.error === null;
  }

  /** The key for a run whose judge is at `url`, bound to that URL's origin; undefined when none was entered for it. */
  forRun(url: string): OriginBoundKey | undefined {
    return this.store.forUrl(url);
  }
}
