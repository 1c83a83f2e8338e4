// Seeded random numbers so every test input is reproducible (mulberry32).
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Uniform in [lo, hi). */
export function uniform(rand: () => number, n: number, lo = -1, hi = 1): number[] {
  return Array.from({ length: n }, () => lo + (hi - lo) * rand());
}

/** Standard normal samples (Box-Muller). */
export function normal(rand: () => number, n: number, scale = 1): number[] {
  return Array.from({ length: n }, () => scale * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()));
}

export function randomInts(rand: () => number, n: number, max: number): number[] {
  return Array.from({ length: n }, () => Math.floor(rand() * max));
}

export function chunk<T>(flat: ArrayLike<T>, cols: number): T[][] {
  const rows: T[][] = [];
  for (let i = 0; i < flat.length; i += cols) rows.push(Array.prototype.slice.call(flat, i, i + cols));
  return rows;
}
