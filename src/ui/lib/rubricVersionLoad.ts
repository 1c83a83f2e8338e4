// The content version (src/rubric/version.ts) of a run's raw rubric, for a Svelte $effect. Hashing is
// asynchronous, so a slow earlier load could resolve after a newer one and overwrite it with the old
// rubric's version: the returned cancel (the effect's cleanup, run before the effect runs again or
// when the component goes) makes the earlier load's result be dropped.
import { parseRubric } from '../../rubric/schema';
import { rubricVersion } from '../../rubric/version';
import type { Rubric } from '../../rubric/schema';

/**
 * Sets null at once, then the version of `rubric` (undefined: none wanted; a rubric that does not
 * parse: stays null) unless cancelled first. Use it as `$effect(() => loadRubricVersion(raw, (v) => (x = v)))`.
 * `versionOf` is for tests (the real hash resolves in an order they cannot choose).
 */
export function loadRubricVersion(
  rubric: unknown,
  set: (version: string | null) => void,
  versionOf: (rubric: Rubric) => Promise<string> = rubricVersion,
): () => void {
  set(null);
  if (rubric === undefined) return () => {};
  let parsed: Rubric;
  try {
    parsed = parseRubric(rubric);
  } catch {
    return () => {};
  }
  let current = true;
  void versionOf(parsed).then(
    (v) => {
      if (current) set(v);
    },
    () => {}, // no Web Crypto: no version, as for a rubric that does not parse
  );
  return () => {
    current = false;
  };
}
