// Float64 reference twin of shaders/grad_norm.wgsl: the global L2 norm of many gradient
// tensors and the clip coefficient of torch.nn.utils.clip_grad_norm_ (norm_type 2):
//   grad_norm = sqrt(sum_t sum_i g_ti^2)
//   clip_scale = min(1, max_grad_norm / (grad_norm + 1e-6)), or 1 when clipping is off.
// Non-finite handling mirrors the f32 kernel (and torch's f32 norm): a NaN entry makes the norm
// NaN, else an infinite entry, or a sum of squares past the f32 range, makes it +Infinity.
// A non-finite norm gives finite = false and clip_scale = 0 (the step is skipped).

/** Largest finite f32; the kernel's f32 sum of squares overflows to +Infinity beyond it. */
export const F32_MAX = 3.4028234663852886e38;
/** torch.nn.utils.clip_grad_norm_ adds this to the norm before dividing. */
export const CLIP_EPS = 1e-6;

export interface StepStateRef {
  gradNorm: number;
  clipScale: number;
  finite: boolean;
  /** Number of NaN or +-Infinity gradient entries over all tensors. */
  nonfiniteCount: number;
  /** Sum of squares per tensor (NaN if it holds a NaN, +Infinity if an infinity or f32 overflow). */
  tensorSumSquares: number[];
  /** NaN or +-Infinity entries per tensor. */
  tensorNonfinite: number[];
}

/**
 * Norm, clip coefficient and finite flag for `grads` (one array per tensor).
 * `maxGradNorm` null or 0 turns clipping off (clip_scale 1), as Hugging Face Trainer does.
 */
export function gradNormRef(grads: readonly ArrayLike<number>[], maxGradNorm: number | null): StepStateRef {
  const tensorSumSquares: number[] = [];
  const tensorNonfinite: number[] = [];
  let anyNaN = false;
  let anyInf = false;
  let total = 0;
  for (const g of grads) {
    let sum = 0;
    let nan = 0;
    let inf = 0;
    for (let i = 0; i < g.length; i++) {
      const x = g[i];
      if (Number.isNaN(x)) nan++;
      else if (!Number.isFinite(x)) inf++;
      else sum += x * x;
    }
    const value = nan > 0 ? NaN : inf > 0 || sum > F32_MAX ? Infinity : sum;
    tensorSumSquares.push(value);
    tensorNonfinite.push(nan + inf);
    if (Number.isNaN(value)) anyNaN = true;
    else if (value === Infinity) anyInf = true;
    else total += value;
  }
  const gradNorm = anyNaN ? NaN : anyInf || total > F32_MAX ? Infinity : Math.sqrt(total);
  const finite = Number.isFinite(gradNorm);
  const clip = maxGradNorm !== null && maxGradNorm > 0;
  const clipScale = !finite ? 0 : clip ? Math.min(1, maxGradNorm / (gradNorm + CLIP_EPS)) : 1;
  return {
    gradNorm,
    clipScale,
    finite,
    nonfiniteCount: tensorNonfinite.reduce((a, b) => a + b, 0),
    tensorSumSquares,
    tensorNonfinite,
  };
}
