// Float64 reference twin of shaders/dropout.wgsl: the same counter-based mask (exact, integer
// hash), values scaled by 1 / (1 - p) in float64.

function pcg(v: number): number {
  const state = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const word = Math.imul(((state >>> ((state >>> 28) + 4)) ^ state) >>> 0, 277803737) >>> 0;
  return ((word >>> 22) ^ word) >>> 0;
}

/** Throws a RangeError naming the bad field. */
export function validateDropout(p: number, seed: number): void {
  if (typeof p !== 'number' || !(p >= 0 && p < 1)) throw new RangeError(`dropout: p must be in [0, 1), got ${p}`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`dropout: seed must be a 32-bit unsigned integer, got ${seed}`);
}

/** The kernel's integer keep threshold: element i is kept iff (hash >> 8) >= ceil(p * 2^24). */
export function dropoutThreshold(p: number): number {
  return Math.ceil(p * 16777216);
}

/** Whether element i survives dropout with probability p under `seed`. */
export function dropoutKept(seed: number, i: number, p: number): boolean {
  return pcg((seed ^ pcg(i)) >>> 0) >>> 8 >= dropoutThreshold(p);
}

/** out = mask(x): kept values times 1 / (1 - p), dropped ones 0. Also its own backward. */
export function dropoutRef(x: ArrayLike<number>, p: number, seed: number): Float64Array {
  validateDropout(p, seed);
  const scale = 1 / (1 - p);
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = x[i] * (dropoutKept(seed, i, p) ? scale : 0);
  return out;
}

/** The new acc after acc += mask(x). */
export function dropoutAccumulateRef(acc: ArrayLike<number>, x: ArrayLike<number>, p: number, seed: number): Float64Array {
  const d = dropoutRef(x, p, seed);
  return Float64Array.from(acc, (a, i) => a + d[i]);
}

/** A per-use seed from a base seed and a salt (e.g. a LoRA site's index): distinct masks per site. */
export function dropoutSeed(base: number, salt: number): number {
  return pcg((pcg(base >>> 0) ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
}
