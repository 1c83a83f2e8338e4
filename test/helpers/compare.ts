// Tolerance comparison that reports the worst element, so a failing test says where and by how much.
import { expect } from 'vitest';

export interface Tolerance {
  /** Absolute tolerance. */
  atol: number;
  /** Relative tolerance (of the expected value's magnitude). */
  rtol: number;
}

/** Asserts |actual - expected| <= atol + rtol*|expected| everywhere; equal infinities match, NaN matches NaN. */
export function expectClose(
  actual: ArrayLike<number | null>,
  expected: ArrayLike<number>,
  tol: Tolerance,
  label = 'values',
): void {
  expect(actual.length, `${label}: length`).toBe(expected.length);
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i];
    const a = actual[i] ?? NaN; // JSON null stands for a non-finite value
    if (Number.isNaN(e) || !Number.isFinite(e)) {
      const ok = Number.isNaN(e) ? Number.isNaN(a) || actual[i] === null : a === e || actual[i] === null;
      if (!ok) {
        worst = i;
        worstExcess = Infinity;
        break;
      }
      continue;
    }
    const excess = Math.abs(a - e) - (tol.atol + tol.rtol * Math.abs(e));
    if (!(excess <= 0) && (worst < 0 || !(excess <= worstExcess))) {
      worst = i;
      worstExcess = Number.isNaN(excess) ? Infinity : excess;
    }
  }
  if (worst >= 0) {
    expect.fail(
      `${label}[${worst}]: got ${actual[worst]}, expected ${expected[worst]} (atol ${tol.atol}, rtol ${tol.rtol})`,
    );
  }
}
