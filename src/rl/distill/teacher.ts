// Distillation teachers (issue 11): what gives the teacher's next-token distributions on the
// student's own samples. A teacher runs inference passes only (prefill with every position's
// logits: no activations kept, no gradients, no optimizer state) on its own prompt followed by the
// very completion tokens the student sampled; pass.ts aligns its completion positions with the
// student's and takes the divergence. Two kinds:
// - self_rubric (RGSD, seed 000 #52; OPSD, seed 002 A074/A093): the same weights with the rubric's
//   criteria in the prompt teach the rubric-free student, judge-free. Frozen = the starting model
//   (the KL reference's weights), live = the policy being trained (a stop-gradient teacher).
// - model: another model on the same engine (a bigger one, or a saved checkpoint) with the
//   student's tokenizer (tokenizerCheck.ts, checked before loading), on the student's own prompt.
// - criterion_injection (CriPO, seed 000 #24; injection.ts): the same weights told only the
//   criteria no rollout of a group met teach that group's rollouts, forward KL; other rows get no term.
// The black_box teacher (ROPD; blackBox.ts) has no logits: it teaches through the rubric it induces.
import type { TokenBatch, Transformer } from '../../model/transformer';
import type { Criterion } from '../../rubric';
import type { GrpoConfig } from '../config';
import { rubricConditionedPrompt } from '../credit/cort';
import { selfTeacherWeights } from './ema';
import { buildRolloutBatch, type RolloutBatch } from '../rolloutBatch';
import { injectionSelection, type InjectionRow } from './injection';

export type DistillationConfig = GrpoConfig['distillation'];

export interface DistillTeacher {
  /** The config's teacher and weights, for messages and metrics. */
  kind: Exclude<DistillationConfig['teacher'], 'off' | 'black_box'>;
  weights: DistillationConfig['teacher_weights'];
  /** Inference passes only. */
  model: Transformer;
  /** The teacher's batch: row b is its prompt followed by row b's completion of the student's batch. */
  batch: RolloutBatch;
  options: DistillationConfig;
  /** Per trained row, 1 = distilled (criterion_injection: the injected rows); absent = every row. */
  rowWeights?: Float32Array;
  /** criterion_injection: the rollouts and criteria injected this step. */
  injection?: { rollouts: number; criteria: number };
  /** Vocabulary ids never in the top-K support (mask_special_tokens: the tokenizer's special tokens; selection.ts). */
  excludedIds?: readonly number[];
}

/** The self-teacher's privileged prompt: the prompt, then the rubric's criteria (CoRT's rubric-conditioned prompt). */
export function privilegedPrompt(prompt: string, criteria: readonly Pick<Criterion, 'text' | 'weight'>[]): string {
  return rubricConditionedPrompt(prompt, criteria);
}

export interface TeacherSource {
  /** The policy being trained (the live teacher). */
  model: Transformer;
  /** The frozen starting model (the KL reference), loaded when the frozen teacher or beta > 0 needs it. */
  reference: Transformer | null;
  /** The ema teacher's weights (teacher_weights "ema"; ema.ts), loaded by the context. */
  ema?: Transformer | null;
  /** The model teacher, loaded by the context (null unless distillation.teacher is "model"). */
  teacherModel?: { model: Transformer; formatPrompt: (text: string) => number[] } | null;
  formatPrompt: (text: string) => number[];
  criteria: readonly (Pick<Criterion, 'text' | 'weight'> & { id?: string })[];
  /** criterion_injection: the trained rows' judged groups (their unexplored criteria), in batch order. */
  rows?: readonly InjectionRow[];
  padTokenId: number;
  config: GrpoConfig;
}

/** Whether the run's teacher needs the frozen starting model loaded next to the policy. */
export function needsFrozenTeacher(config: Pick<GrpoConfig, 'distillation'>): boolean {
  const self = config.distillation.teacher === 'self_rubric' || config.distillation.teacher === 'criterion_injection';
  return self && config.distillation.teacher_weights === 'frozen';
}

/**
 * The step's teacher for the trained rows (their prompt texts and sampled completions), or null
 * when distillation is off. Refuses a teacher sequence longer than the model's context.
 */
export function distillTeacher(src: TeacherSource, prompts: readonly string[], completions: readonly (readonly number[])[]): DistillTeacher | null {
  const options = src.config.distillation;
  // The black-box teacher has no logits: it acted through the rubric it induced (blackBox.ts).
  if (options.teacher === 'off' || options.teacher === 'black_box') return null;
  let model: Transformer | null;
  let ids: number[][];
  let injected: ReturnType<typeof injectionSelection> | null = null;
  if (options.teacher === 'model') {
    if (!src.teacherModel) throw new Error(`the teacher model ${options.teacher_model ?? ''} was not loaded: start the run again`);
    model = src.teacherModel.model;
    if (model.config.vocabSize !== src.model.config.vocabSize) {
      throw new RangeError(`the teacher model's vocabulary has ${model.config.vocabSize} entries, the student's ${src.model.config.vocabSize}: it must use the student's tokenizer`);
    }
    // The student's own prompt, in the teacher's prompt template (the tokenizer is the same).
    ids = prompts.map((p) => src.teacherModel!.formatPrompt(p));
  } else {
    model = selfTeacherWeights(src, options.teacher_weights);
    if (!model) throw new Error(`the frozen ${options.teacher} teacher needs the starting model, which was not loaded: start the run again`);
    if (options.teacher === 'criterion_injection') {
      if (!src.rows || src.rows.length !== prompts.length) throw new Error('the criterion_injection teacher needs the step\'s judged rollouts: use distillation mode "mixed"');
      const selection = injectionSelection(src.criteria, src.rows);
      injected = selection;
      // A row outside the injection keeps its plain prompt: it is in the batch only to keep the layout.
      ids = prompts.map((p, b) => src.formatPrompt(selection.contexts[b].length ? privilegedPrompt(p, selection.contexts[b]) : p));
    } else {
      if (src.criteria.length === 0) throw new RangeError('the self_rubric teacher needs a rubric with at least one criterion: it is the privileged context the teacher sees');
      ids = prompts.map((p) => src.formatPrompt(privilegedPrompt(p, src.criteria)));
    }
  }
  const batch = buildRolloutBatch(ids, completions, completions.map(() => false), { padTokenId: src.padTokenId, maskTruncatedCompletions: false });
  const context = model.config.maxPositions;
  if (batch.tokens.seqLen > context) {
    const what = options.teacher === 'model' ? 'the teacher model\'s prompt' : `the ${options.teacher} teacher's prompt (the prompt plus the rubric's criteria)`;
    throw new RangeError(`distillation: ${what} and its completion are ${batch.tokens.seqLen} tokens, above the teacher's context of ${context}: shorten the criteria, the prompts or max_completion_length`);
  }
  if (injected) {
    // CriPO's localized forward KL: GKD beta 0, whatever beta says.
    return { kind: options.teacher, weights: options.teacher_weights, model, batch, options: { ...options, beta: 0 }, rowWeights: injected.rowWeights, injection: { rollouts: injected.rollouts, criteria: injected.criteria } };
  }
  return { kind: options.teacher, weights: options.teacher_weights, model, batch, options };
}

/** Sequences [start, start + n) of the teacher's batch. */
export function teacherTokens(teacher: DistillTeacher, start: number, n: number): TokenBatch {
  const { ids, pads, seqLen: T } = teacher.batch.tokens;
  return { batch: n, seqLen: T, ids: ids.slice(start * T, (start + n) * T), pads: Array.from(pads).slice(start, start + n) };
}
