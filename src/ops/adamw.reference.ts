// Float64 reference twin of shaders/adamw.wgsl: one step of torch.optim.AdamW (amsgrad=False,
// maximize=False) on gradients clipped by the global norm (gradNorm.reference.ts):
//   if the norm is not finite: nothing changes (the step is skipped)
//   g = grad * clip_scale
//   p = p * (1 - lr * weight_decay)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
import { gradNormRef, type StepStateRef } from './gradNorm.reference';

/** Hugging Face TrainingArguments names; defaults are theirs (and torch's, but weight_decay 0). */
export interface AdamWHyper {
  /** The rate for this step (from the schedule). */
  learning_rate: number;
  adam_beta1?: number;
  adam_beta2?: number;
  adam_epsilon?: number;
  weight_decay?: number;
}

export interface AdamWTensorRef {
  param: ArrayLike<number>;
  /** exp_avg, the first moment (zeros before step 1). */
  m: ArrayLike<number>;
  /** exp_avg_sq, the second moment (zeros before step 1). */
  v: ArrayLike<number>;
  /** Overrides weight_decay for this tensor (Trainer gives biases and norm weights 0). */
  weight_decay?: number;
}

export interface AdamWStateRef {
  param: Float64Array;
  m: Float64Array;
  v: Float64Array;
}

/** One AdamW update of one tensor with an already-clipped gradient; `step` t counts from 1. */
export function adamwUpdateRef(
  tensor: AdamWTensorRef,
  grad: ArrayLike<number>,
  step: number,
  hyper: AdamWHyper,
): AdamWStateRef {
  const lr = hyper.learning_rate;
  const beta1 = hyper.adam_beta1 ?? 0.9;
  const beta2 = hyper.adam_beta2 ?? 0.999;
  const eps = hyper.adam_epsilon ?? 1e-8;
  const wd = tensor.weight_decay ?? hyper.weight_decay ?? 0;
  const n = tensor.param.length;
  const out: AdamWStateRef = { param: new Float64Array(n), m: new Float64Array(n), v: new Float64Array(n) };
  const stepSize = lr / (1 - beta1 ** step);
  const bc2Sqrt = Math.sqrt(1 - beta2 ** step);
  for (let i = 0; i < n; i++) {
    const g = grad[i];
    const m = beta1 * tensor.m[i] + (1 - beta1) * g;
    const v = beta2 * tensor.v[i] + (1 - beta2) * g * g;
    const decayed = tensor.param[i] * (1 - lr * wd);
    out.param[i] = decayed - stepSize * (m / (Math.sqrt(v) / bc2Sqrt + eps));
    out.m[i] = m;
    out.v[i] = v;
  }
  return out;
}

export interface OptimizerStepRefResult {
  tensors: AdamWStateRef[];
  state: StepStateRef;
}

/**
 * Global-norm clipping then AdamW on every tensor, as one trainer step. When the norm is not
 * finite, every tensor comes back unchanged.
 * `max_grad_norm`: default 1.0 (Trainer's); null or 0 turns clipping off.
 */
export function optimizerStepRef(
  tensors: readonly AdamWTensorRef[],
  grads: readonly ArrayLike<number>[],
  step: number,
  hyper: AdamWHyper & { max_grad_norm?: number | null },
): OptimizerStepRefResult {
  const state = gradNormRef(grads, hyper.max_grad_norm === undefined ? 1 : hyper.max_grad_norm);
  const out = tensors.map((t, k) => {
    if (!state.finite) return { param: Float64Array.from(t.param), m: Float64Array.from(t.m), v: Float64Array.from(t.v) };
    const g = Array.from(grads[k], (x) => x * state.clipScale);
    return adamwUpdateRef(t, g, step, hyper);
  });
  return { tensors: out, state };
}
