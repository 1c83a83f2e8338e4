// CoRT's two scoring passes (cort.ts has the formula): every completion under its
// rubric-conditioned prompt and under its plain (training) prompt, as inference passes of the
// current policy (prefill with every position's logits, nothing kept for a backward, like the KL
// reference in update.ts), recorded into one submission (one per micro-batch of
// per_device_train_batch_size sequences, so the two logit buffers fit where the update does);
// the per-token contrast comes back.
import type { GpuRuntime } from '../../gpu/runtime';
import { recordLogprobsForward } from '../../ops/logprobs';
import type { Transformer } from '../../model/transformer';
import { buildRolloutBatch } from '../rolloutBatch';

export interface CortPassInput {
  rt: GpuRuntime;
  model: Transformer;
  padTokenId: number;
  /** Per rollout: the rubric-conditioned and the plain prompt, as token ids. */
  rubricPrompts: readonly (readonly number[])[];
  plainPrompts: readonly (readonly number[])[];
  completions: readonly (readonly number[])[];
  /** The update's temperature (log-probs of the tempered policy, as everywhere in the loss). */
  temperature: number;
  /** Sequences per submission (the update's micro-batch); null = all at once. */
  microBatch?: number | null;
}

/** Per rollout, c_j = log π(y_j | rubric prompt) − log π(y_j | plain prompt) for each completion token. */
export async function cortContrasts(input: CortPassInput): Promise<Float64Array[]> {
  const N = input.completions.length;
  const size = Math.max(1, Math.min(input.microBatch ?? N, N));
  const out: Float64Array[] = [];
  for (let start = 0; start < N; start += size) {
    const part = (x: readonly (readonly number[])[]) => x.slice(start, start + size);
    out.push(...(await contrastsOf({ ...input, rubricPrompts: part(input.rubricPrompts), plainPrompts: part(input.plainPrompts), completions: part(input.completions) })));
  }
  return out;
}

async function contrastsOf(input: CortPassInput): Promise<Float64Array[]> {
  const { rt, model, completions } = input;
  const N = completions.length;
  const context = model.config.maxPositions;
  const longest = Math.max(...input.rubricPrompts.map((p) => p.length)) + Math.max(1, ...completions.map((c) => c.length));
  if (longest > context) {
    throw new RangeError(
      `cort_credit: a rubric-conditioned prompt plus its completion is ${longest} tokens, above the model's context of ${context}: shorten the criteria or max_completion_length, or turn cort_credit off`,
    );
  }
  const none = completions.map(() => false);
  const rec = rt.recorder('grpo.cort');
  const reads = [input.rubricPrompts, input.plainPrompts].map((prompts, k) => {
    const batch = buildRolloutBatch(prompts, completions, none, { padTokenId: input.padTokenId, maskTruncatedCompletions: false });
    const rows = N * batch.tokens.seqLen;
    const logits = model.prefill(rec, batch.tokens, { logits: 'all' });
    const targets = rt.upload(batch.targets, `grpo.cort.targets.${k}`);
    const lp = recordLogprobsForward(rt, rec, logits, targets, { rows, vocab: model.config.vocabSize, temperature: input.temperature });
    const read = rec.readF32(lp.logprobs, rows);
    rec.releaseAfterSubmit(logits, targets, lp.logprobs, lp.entropy, lp.rowStats);
    return { read, seqLen: batch.tokens.seqLen, start: batch.completionStart };
  });
  await rec.submit();
  const [withRubric, plain] = await Promise.all(reads.map(async (r) => ({ ...r, values: await r.read })));
  return completions.map((ids, b) =>
    Float64Array.from({ length: ids.length }, (_, j) => withRubric.values[b * withRubric.seqLen + withRubric.start + j] - plain.values[b * plain.seqLen + plain.start + j]),
  );
}
