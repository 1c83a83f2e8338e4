// The linear-probe judge (issue 13; seed 000 #40) on our engine: per judge-question criterion,
// P(yes) = σ(w·h + b), h the judge model's final hidden state for the judge prompt (the final
// norm's output at the prompt's last token, the vector the head reads for the yes/no answer;
// src/rubric/probe.ts says why the last token and how w, b are fitted). The judge prompt is the
// model judge's own (judgePromptText, or the compact one on short contexts), followed by the
// answer prefix when it is a token of its own, so h is exactly where the P(yes) judge reads.
// Training happens when the run opens, from the user's verdict labels stored with the rubric
// version (src/rubric/probeLabels.ts); the fitted probes are kept with the rubric version and
// written into run files; links never carry them (see src/rubric/probeSet.ts).
import type { Recorder } from '../gpu/recorder';
import type { Tokenizer } from '../model/tokenizer';
import type { Transformer } from '../model/transformer';
import { unscorable, type CriterionResult, type Judge, type JudgeRequest } from '../rubric/judge';
import { compactJudgePromptText, judgePromptText, questionOf } from '../rubric/judges/modelJudgePrompt';
import { DEFAULT_PROBE_L2, fitProbe, probeScore } from '../rubric/probe';
import { examplesByCriterion, type ProbeExample } from '../rubric/probeLabels';
import type { ProbeSet } from '../rubric/probeSet';
import { choiceTokens, planPasses } from './modelJudge';

/** What the probe judge needs of a model on our engine (a LoadedModel has it). */
export interface ProbeEngine {
  model: Transformer;
  tokenizer: Tokenizer;
  formatPrompt: (text: string) => number[];
  /** The judge prompt text (default: the model judge's, compact on short contexts). */
  buildPrompt?: (request: JudgeRequest) => string;
}

/** Contexts shorter than this get the compact judge prompt (as engineJudge decides). */
const SHORT_CONTEXT = 1024;

const promptOf = (engine: ProbeEngine) => engine.buildPrompt ?? (engine.model.config.maxPositions < SHORT_CONTEXT ? compactJudgePromptText : judgePromptText);

/** The token ids whose last position's hidden state is the request's feature vector. */
export function probeInputIds(engine: ProbeEngine, request: JudgeRequest): number[] {
  const criterion = questionOf(request);
  let prefix: number[] = [];
  try {
    prefix = choiceTokens(engine.tokenizer, criterion.choices, ' ').prefix;
  } catch {
    // Choices that share a first token: the probe does not read choice tokens, only the prompt.
  }
  const ids = [...engine.formatPrompt(promptOf(engine)(request)), ...prefix];
  if (ids.length === 0) throw new RangeError('the judge prompt encodes to no tokens');
  const c = engine.model.config;
  if (ids.length > c.maxPositions) throw new RangeError(`the judge prompt is ${ids.length} tokens, beyond the judge model's context of ${c.maxPositions}`);
  return ids;
}

/** One prefill pass over left-padded rows; the final hidden state at each row's last token. */
async function hiddenPass(model: Transformer, rows: readonly number[][]): Promise<Float32Array[]> {
  const { rt } = model;
  const D = model.config.hiddenSize;
  const B = rows.length;
  const T = Math.max(...rows.map((r) => r.length));
  const ids = new Uint32Array(B * T);
  const pads = rows.map((r, b) => {
    ids.set(r, b * T + T - r.length);
    return T - r.length;
  });
  const rec: Recorder = rt.recorder('probe judge');
  const hidden = rt.storage(B * D * 4, 'probe.hidden');
  try {
    const logits = model.prefill(rec, { batch: B, seqLen: T, ids, pads }, { hiddenOut: hidden, adapters: false });
    rec.releaseAfterSubmit(logits);
    const read = rec.readF32(hidden, B * D);
    await rec.submit();
    const values = await read;
    return rows.map((_, b) => values.slice(b * D, (b + 1) * D));
  } finally {
    rt.release(hidden);
  }
}

/**
 * The final hidden state of each id sequence (last token, after the final norm), in input order;
 * rows are packed into passes as the model judge packs them. Rejects when `signal` aborts.
 */
export async function finalHiddenStates(model: Transformer, sequences: readonly number[][], signal?: AbortSignal, batchSize = 16): Promise<Float32Array[]> {
  const out = new Array<Float32Array>(sequences.length);
  const maxBinding = model.rt.device.limits.maxStorageBufferBindingSize;
  const c = model.config;
  const widest = Math.max(c.intermediateSize, c.numHeads * c.headDim, c.hiddenSize);
  const maxPositionsPerBinding = Math.max(1, Math.floor(maxBinding / (widest * 4)));
  const rowsPerBinding = Math.max(1, Math.floor(maxBinding / (c.vocabSize * 4)));
  const passes = planPasses(
    sequences.map((s) => s.length),
    { batchSize: Math.max(1, Math.min(batchSize, rowsPerBinding)), maxTokensPerPass: 4096, maxPositionsPerBinding },
  );
  for (const pass of passes) {
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('the judge was stopped', 'AbortError');
    const states = await hiddenPass(
      model,
      pass.map((i) => sequences[i]),
    );
    pass.forEach((i, k) => (out[i] = states[k]));
  }
  return out;
}

export interface TrainProbeOptions {
  /** The judge model's id as runs name it ("self" is the policy's starting weights). */
  judgeModel: string;
  /** Question criteria the probe must judge, in rubric order (each needs enough labels). */
  criteria: readonly string[];
  rubricVersion: string;
  /** The L2 penalty (default 1). */
  l2?: number;
  signal?: AbortSignal;
}

/**
 * Fits one probe per criterion from labelled examples: the hidden states come from `engine`.
 * Throws ProbeLabelError naming the first criterion with too few labels, before any GPU work.
 */
export async function trainProbeSet(engine: ProbeEngine, examples: readonly ProbeExample[], rubric: { criteria: readonly { id: string }[] }, options: TrainProbeOptions): Promise<ProbeSet> {
  const by = examplesByCriterion(examples, options.criteria);
  const l2 = options.l2 ?? DEFAULT_PROBE_L2;
  const criteria = new Map(rubric.criteria.map((c) => [c.id, c]));
  const probes: ProbeSet['probes'] = [];
  for (const [criterion_id, list] of by) {
    const criterion = criteria.get(criterion_id);
    if (!criterion) throw new RangeError(`criterion "${criterion_id}" is not in the rubric`);
    const ids = list.map((e) =>
      probeInputIds(engine, { rubricVersion: options.rubricVersion, prompt: e.prompt, completion: e.completion, criterion: criterion as JudgeRequest['criterion'] }),
    );
    const states = await finalHiddenStates(engine.model, ids, options.signal);
    const targets = list.map((e) => e.target);
    const fit = fitProbe(states, targets, { l2 });
    probes.push({ criterion_id, weights: fit.weights, bias: fit.bias, yes: targets.filter(Boolean).length, no: targets.filter((t) => !t).length });
  }
  return { judge_model: options.judgeModel, hidden_size: engine.model.config.hiddenSize, l2, probes };
}

/** A judge scoring each question criterion by its trained probe; criteria without one are unscorable. */
export function probeJudge(engine: ProbeEngine, set: ProbeSet, name = `probe:${set.judge_model}`): Judge {
  const D = engine.model.config.hiddenSize;
  if (set.hidden_size !== D) throw new RangeError(`the probes were trained on hidden states of size ${set.hidden_size}; this judge model's are ${D}`);
  const probes = new Map(set.probes.map((p) => [p.criterion_id, p]));
  return {
    name,
    async judge(requests, options = {}): Promise<CriterionResult[]> {
      const results = new Array<CriterionResult>(requests.length);
      const todo: { index: number; ids: number[] }[] = [];
      requests.forEach((r, index) => {
        const id = r.criterion.id;
        try {
          if (!probes.has(id)) throw new RangeError(`no probe is trained for criterion "${id}" (it had no labels when the run opened)`);
          todo.push({ index, ids: probeInputIds(engine, r) });
        } catch (e) {
          results[index] = unscorable(id, (e as Error).message);
        }
      });
      try {
        const states = await finalHiddenStates(
          engine.model,
          todo.map((t) => t.ids),
          options.signal,
        );
        todo.forEach((t, k) => {
          const r = requests[t.index];
          const p = probes.get(r.criterion.id)!;
          const score = probeScore(p, states[k]);
          results[t.index] = Number.isFinite(score)
            ? { criterion_id: r.criterion.id, status: 'ok', score, reason: `probe P(yes)=${score.toFixed(3)} (trained on ${p.yes} yes / ${p.no} no labels)` }
            : unscorable(r.criterion.id, 'the judge model produced a non-finite hidden state');
        });
      } catch (e) {
        if (options.signal?.aborted) throw e;
        for (const t of todo) results[t.index] ??= unscorable(requests[t.index].criterion.id, `the probe judge's forward pass failed: ${(e as Error).message}`);
      }
      options.onAnswered?.(requests.length);
      return results;
    },
  };
}
