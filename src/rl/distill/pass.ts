// The distillation term of one update micro-batch, recorded into the update's own submission
// (update.ts): the teacher's inference pass on its prompts + the student's completions, its
// completion rows copied to the student's positions (align.ts), the distill kernel's per-token
// divergence and its gradient with respect to the student logits. The caller adds that gradient
// to the one the policy loss gives the logits, so the backward pass starts from their sum. On the
// first pass it also reads back the divergences and both argmax ids (greedy draws of the sampler
// kernel) for the step's metrics.
import type { GpuRuntime } from '../../gpu/runtime';
import type { Recorder } from '../../gpu/recorder';
import { recordDistillBackward, recordDistillForward } from '../../ops/distill';
import { recordSample } from '../../ops/sample';
import { alignmentCopies, type RowLayout } from './align';
import { excludedVector } from './selection';
import { teacherTokens, type DistillTeacher } from './teacher';

export interface DistillRead {
  /** [rows] the divergence of each distilled token, 0 elsewhere. */
  divergence: Float32Array;
  /** [rows] argmax of the student's and of the (aligned) teacher's logits. */
  studentTop: Uint32Array;
  teacherTop: Uint32Array;
}

export interface DistillPass {
  /** [rows · V] d(distillation loss) / d(student logits). */
  grad: GPUBuffer;
  /** Resolves after the submission when readBack was asked for. */
  read: Promise<DistillRead> | null;
  /** Every buffer of the pass: release after the submission. */
  buffers: GPUBuffer[];
}

export interface DistillMicroBatch {
  /** First sequence and count of the micro-batch in the step's batch. */
  start: number;
  n: number;
  /** [n · T, V] the student's logits of the training forward pass. */
  studentLogits: GPUBuffer;
  student: RowLayout;
  /** [n · T] 1 where the token is distilled (align.ts distillTokenWeights). */
  weights: Float32Array;
  /** d loss / d divergence of a distilled token (align.ts distillGradCoefficient). */
  coefficient: number;
  readBack: boolean;
}

export function recordDistillTerm(rt: GpuRuntime, rec: Recorder, teacher: DistillTeacher, mb: DistillMicroBatch): DistillPass {
  const V = teacher.model.config.vocabSize;
  const rows = mb.n * mb.student.seqLen;
  const tokens = teacherTokens(teacher, mb.start, mb.n);
  const teacherLayout: RowLayout = { seqLen: tokens.seqLen, completionStart: teacher.batch.completionStart };
  const buffers: GPUBuffer[] = [];
  const keep = <B extends GPUBuffer>(b: B) => (buffers.push(b), b);
  const teacherLogits = keep(teacher.model.prefill(rec, tokens, { logits: 'all' }));
  // The teacher's completion rows at the student's positions; every other row 0 (a uniform
  // distribution, out of the loss by its weight 0).
  const aligned = keep(rt.storage(rows * V * 4, 'distill.teacher_aligned'));
  rec.clear(aligned, 0, rows * V * 4);
  for (const c of alignmentCopies(mb.n, mb.student, teacherLayout)) {
    if (c.rows > 0) rec.copy(teacherLogits, aligned, c.rows * V * 4, c.from * V * 4, c.to * V * 4);
  }
  const fwd = recordDistillForward(
    rt,
    rec,
    {
      student: mb.studentLogits,
      teacher: aligned,
      excluded: keep(rt.upload(excludedVector(teacher.excludedIds ?? [], V), 'distill.excluded')),
      tokenWeight: keep(rt.upload(mb.weights, 'distill.token_weight')),
    },
    { rows, vocab: V, beta: teacher.options.beta, temperature: teacher.options.temperature, topK: teacher.options.top_k },
  );
  buffers.push(fwd.loss, fwd.rowStats, fwd.rowSelect);
  const gradLoss = keep(rt.upload(new Float32Array(rows).fill(mb.coefficient), 'distill.grad_loss'));
  const grad = keep(recordDistillBackward(rt, rec, fwd, gradLoss));
  let read: Promise<DistillRead> | null = null;
  if (mb.readBack) {
    // Greedy draws (temperature 0): the argmax, lowest id on ties. No repetition penalty, so the
    // seen-id buffer is bound but never read.
    const seen = keep(rt.storage(16, 'distill.seen'));
    const greedy = { rows, vocab: V, temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
    const s = recordSample(rt, rec, mb.studentLogits, greedy, seen);
    const t = recordSample(rt, rec, aligned, greedy, seen);
    buffers.push(s.tokens, s.logprobs, t.tokens, t.logprobs);
    const reads = [rec.readF32(fwd.loss, rows), rec.readU32(s.tokens, rows), rec.readU32(t.tokens, rows)] as const;
    read = Promise.all(reads).then(([divergence, studentTop, teacherTop]) => ({ divergence, studentTop, teacherTop }));
  }
  return { grad, read, buffers };
}
