// Float64 reference twin of shaders/elementwise.wgsl.

/** out = a + alpha * b. Its backward is the identity: d a = d out, d b = alpha * d out. */
export function addRef(a: ArrayLike<number>, b: ArrayLike<number>, alpha = 1): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] + alpha * b[i];
  return out;
}

/** The new value of acc after acc += alpha * a (the input is not modified). */
export function accumulateRef(acc: ArrayLike<number>, a: ArrayLike<number>, alpha = 1): Float64Array {
  return addRef(acc, a, alpha);
}

/** out = alpha * a. */
export function scaleRef(a: ArrayLike<number>, alpha: number): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = alpha * a[i];
  return out;
}

/** `count` copies of `value`. */
export function fillRef(count: number, value: number): Float64Array {
  return new Float64Array(count).fill(value);
}
