// Seeded random numbers so every test input is reproducible (mulberry32).
import { mulberry32 } from '../../src/rubric/dropout';
/** The same generator the rubric's Rubric Dropout uses. */
export function rng(seed: number): () => number {
  return mulberry32(seed);
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
