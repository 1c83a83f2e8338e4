// The pure parts of the distillation term (no GPU): where a teacher row's logits land in the
// student's layout, the per-token weights and gradient coefficient, and the step's metrics.
// Both batches are laid out by buildRolloutBatch: [left padding | prompt | completion | right
// padding], so in either one completion token j of row b is predicted at b·T + (P − 1) + j; the
// teacher's prompt is longer (it carries the rubric), so only P and T differ between them.

/** A row layout: sequence length T and the position predicting completion token 0 (P − 1). */
export interface RowLayout {
  seqLen: number;
  completionStart: number;
}

/** One contiguous block of logit rows copied from the teacher's layout into the student's. */
export interface RowCopy {
  /** First teacher logit row (b·T' + P' − 1). */
  from: number;
  /** First student logit row (b·T + P − 1). */
  to: number;
  /** Rows in the block: the completion positions, L = T − P in both layouts. */
  rows: number;
}

/** Completion positions of a layout: T − P, the same in both layouts (the completions are the same tokens). */
export function completionPositions(layout: RowLayout): number {
  return layout.seqLen - layout.completionStart - 1;
}

/**
 * The copies that put the teacher's logits of sequences [0, n) at the student's positions, one
 * block per sequence. Throws when the two layouts do not hold the same completion length.
 */
export function alignmentCopies(n: number, student: RowLayout, teacher: RowLayout): RowCopy[] {
  const L = completionPositions(student);
  if (completionPositions(teacher) !== L) {
    throw new RangeError(`the teacher's batch holds ${completionPositions(teacher)} completion positions per sequence, the student's ${L}: they must score the same completions`);
  }
  return Array.from({ length: n }, (_, b) => ({ from: b * teacher.seqLen + teacher.completionStart, to: b * student.seqLen + student.completionStart, rows: L }));
}

/** Host-side alignment (what the copies do on the GPU): [n·T, V] student-layout rows, 0 where no completion token is predicted. */
export function alignTeacherRows(teacher: ArrayLike<number>, n: number, vocab: number, student: RowLayout, teacherLayout: RowLayout): Float64Array {
  const out = new Float64Array(n * student.seqLen * vocab);
  for (const c of alignmentCopies(n, student, teacherLayout)) {
    for (let r = 0; r < c.rows; r++) for (let v = 0; v < vocab; v++) out[(c.to + r) * vocab + v] = teacher[(c.from + r) * vocab + v];
  }
  return out;
}

/**
 * The distillation loss is TRL's generalized_jsd_loss "batchmean" with labels: the sum of the
 * per-token divergences over the optimizer step's completion tokens divided by their count, times
 * the option's weight. A token out of the loss (the completion mask, the entropy mask) adds 0 but
 * still counts in the divisor, as TRL's top_entropy_quantile does for the policy loss.
 * Returns d loss / d divergence[t] for every kept token.
 */
export function distillGradCoefficient(weight: number, stepCompletionTokens: number): number {
  return stepCompletionTokens > 0 ? weight / stepCompletionTokens : 0;
}

/** Per row 1 when the token is distilled: a completion token (mask) the entropy mask keeps (null = no entropy mask). */
export function distillTokenWeights(mask: ArrayLike<number>, entropyMask: ArrayLike<number> | null): Float32Array {
  return Float32Array.from({ length: mask.length }, (_, i) => (mask[i] > 0 && (!entropyMask || entropyMask[i] > 0) ? 1 : 0));
}

export interface DistillMetrics {
  /** Mean per-token divergence (GKD beta's divergence, at the distillation temperature) over the distilled tokens; null when none. */
  divergence: number | null;
  /** Fraction of distilled tokens where the teacher's and the student's most likely next token agree; null when none. */
  top1_agreement: number | null;
  /** Tokens in the distillation loss, and all completion tokens (their ratio is the retained share). */
  retained_tokens: number;
  completion_tokens: number;
  /** weight × divergence: the distillation term of the loss (mean over the completion tokens, as trained). */
  loss: number;
  /** criterion_injection (injection.ts): rollouts distilled this step, and Σ over their groups of the criteria their teacher was told. */
  injected_rollouts?: number;
  injected_criteria?: number;
}

/** The step's metrics from the per-row divergences and argmax ids of the first update pass. */
export function distillMetrics(input: {
  divergence: ArrayLike<number>;
  studentTop: ArrayLike<number>;
  teacherTop: ArrayLike<number>;
  /** 1 = distilled (distillTokenWeights). */
  weights: ArrayLike<number>;
  /** 1 = a completion token (the batch's mask). */
  mask: ArrayLike<number>;
  weight: number;
}): DistillMetrics {
  let sum = 0;
  let kept = 0;
  let agree = 0;
  let completion = 0;
  for (let i = 0; i < input.mask.length; i++) {
    if (input.mask[i] > 0) completion++;
    if (!(input.weights[i] > 0)) continue;
    kept++;
    sum += input.divergence[i];
    if (input.studentTop[i] === input.teacherTop[i]) agree++;
  }
  return {
    divergence: kept ? sum / kept : null,
    top1_agreement: kept ? agree / kept : null,
    retained_tokens: kept,
    completion_tokens: completion,
    loss: completion ? (input.weight * sum) / completion : 0,
  };
}
