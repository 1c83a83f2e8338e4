// Which shown settings really differ from their defaults. A preset or a link may spell out a
// default (save_steps: 10, temperature: 1.0): that is set, not changed, so it is neither counted
// in "N changed" nor shown bold.
import { ALL_OPTIONS, defaultOf, getPath } from './settingsCatalog';

/** Same value: numbers, strings, booleans, null, and arrays/objects compared by their JSON. */
export function sameSetting(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Is the option at `key` set in `config` to a value other than its default? */
export function isChanged(config: Record<string, unknown>, key: string): boolean {
  const value = getPath(config, key);
  return value !== undefined && !sameSetting(value, defaultOf(key));
}

/** The keys of the catalog's options whose values differ from the defaults. */
export function changedKeys(config: Record<string, unknown>, keys: readonly string[] = ALL_OPTIONS.map((o) => o.key)): string[] {
  return keys.filter((k) => isChanged(config, k));
}
