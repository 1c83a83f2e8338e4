// An in-memory LRU of judge results keyed by (rubric version, criterion id, prompt, completion).
// Only successful results are kept: a failure must be retried, never replayed.
import type { CriterionResult } from './judge';

export interface JudgeCacheKey {
  rubricVersion: string;
  criterionId: string;
  prompt: string;
  completion: string;
}

export interface JudgeCacheStats {
  hits: number;
  misses: number;
  size: number;
}

export class JudgeCache {
  private readonly entries = new Map<string, CriterionResult>();
  private chars = 0;
  private hits = 0;
  private misses = 0;

  /**
   * @param maxEntries most results kept
   * @param maxChars most characters of keys kept (prompts and completions dominate memory)
   */
  constructor(
    readonly maxEntries = 4096,
    readonly maxChars = 16_000_000,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
    if (!(maxChars >= 1)) throw new RangeError(`maxChars must be >= 1, got ${maxChars}`);
  }

  private static key(k: JudgeCacheKey): string {
    return JSON.stringify([k.rubricVersion, k.criterionId, k.prompt, k.completion]);
  }

  /** The cached result (now most recently used), or undefined. Counts a hit or a miss. */
  get(k: JudgeCacheKey): CriterionResult | undefined {
    const key = JudgeCache.key(k);
    const hit = this.entries.get(key);
    if (hit === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /** Stores an 'ok' result; other statuses are ignored. Evicts the least recently used. */
  set(k: JudgeCacheKey, result: CriterionResult): void {
    if (result.status !== 'ok') return;
    const key = JudgeCache.key(k);
    if (key.length > this.maxChars) return;
    if (this.entries.delete(key)) this.chars -= key.length;
    this.entries.set(key, result);
    this.chars += key.length;
    for (const old of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.entries.delete(old);
      this.chars -= old.length;
    }
  }

  stats(): JudgeCacheStats {
    return { hits: this.hits, misses: this.misses, size: this.entries.size };
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
    this.hits = 0;
    this.misses = 0;
  }
}
