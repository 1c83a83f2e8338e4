// Model judges behind the rubric's Judge interface.
//
// 1. modelJudge: a criterion's question scored by a language model on our own engine, as a soft
//    score read from its next-token distribution after the judge prompt (no sampling):
//      p_i   = softmax over the choices of z[t_i]  (t_i = first token of choice i, z = logits)
//      score = Σ_i p_i · i / (n − 1)              (yes/no: P("yes"))
//      mass  = Σ_i exp(z[t_i] − logsumexp(z))      (how much of the distribution the choices hold)
//    Any Transformer works, the policy itself included (self-judge). All items of a call go
//    through a few forward passes: items sorted by length, packed into left-padded batches.
//    Cost per pass: one Transformer.prefill over B × T tokens (the inference forward: temporaries
//    reused from layer to layer, nothing kept for backward, and the head only at the last
//    position: B·V·D multiply-adds, not B·T·V·D), one log-softmax dispatch over [B, V] (for
//    logsumexp) and B·(n + 1) floats read back — the readback never grows with T or V.
// 2. zeroShotJudge: a @huggingface/transformers zero-shot (NLI) classification pipeline, for users
//    online. It downloads its model from the Hugging Face Hub on first use; untested here, where
//    nothing can be downloaded (only its scoring is tested, with a stand-in classifier).
import type { Recorder } from '../gpu/recorder';
import { recordLogprobsForward } from '../ops/logprobs';
import type { Tokenizer } from '../model/tokenizer';
import type { Transformer } from '../model/transformer';
import { unscorable, type CriterionResult, type Judge, type JudgeRequest } from '../rubric/judge';
import type { QuestionCriterion } from '../rubric/schema';
import { judgePromptText, questionOf } from '../rubric/judges/modelJudgePrompt';

// ---- choices as tokens ----

export interface ChoiceTokens {
  /** Tokens appended to the prompt before the answer (the answer prefix when it tokenises alone). */
  prefix: number[];
  /** The first token of each choice. */
  tokens: number[];
}

/**
 * The token the model would start each choice with after the prompt. The answer follows the
 * prompt as `answerPrefix + choice` ("Answer:" + " yes"). When the prefix is tokens of its own
 * (a byte tokenizer: " " then "y"), those tokens are appended to the prompt and each choice's
 * next token is read; when it merges into the word (GPT-2's " yes"), the merged token is read.
 * Throws RangeError when two choices start with the same token (they could not be told apart).
 */
export function choiceTokens(tokenizer: Tokenizer, choices: readonly string[], answerPrefix: string): ChoiceTokens {
  const prefixIds = answerPrefix === '' ? [] : tokenizer.encode(answerPrefix);
  const modes = choices.map((choice) => {
    const ids = tokenizer.encode(answerPrefix + choice);
    const separate = prefixIds.length > 0 && ids.length > prefixIds.length && prefixIds.every((t, i) => ids[i] === t);
    const token = separate ? ids[prefixIds.length] : ids[0];
    if (token === undefined) throw new RangeError(`choice ${JSON.stringify(choice)} encodes to no tokens`);
    return { separate, token };
  });
  if (modes.some((m) => m.separate !== modes[0].separate)) {
    throw new RangeError(`answerPrefix ${JSON.stringify(answerPrefix)} merges into some choices' first tokens but not others'; use another answerPrefix`);
  }
  const tokens = modes.map((m) => m.token);
  tokens.forEach((t, i) => {
    const j = tokens.indexOf(t);
    if (j < i) throw new RangeError(`choices ${JSON.stringify(choices[j])} and ${JSON.stringify(choices[i])} start with the same token ${t}: the judge cannot tell them apart; reword one`);
  });
  return { prefix: modes[0].separate ? prefixIds : [], tokens };
}

// ---- the distribution over choices ----

export interface ChoiceDistribution {
  /** Renormalised over the choices (sums to 1). */
  probabilities: number[];
  /** Share of the whole next-token distribution held by the choices' first tokens, in [0, 1]. */
  mass: number;
  /** Σ p_i · i / (n − 1), in [0, 1]. */
  score: number;
}

/** The distribution from the choices' logits and the row's logsumexp (float64); null if not finite. */
export function choiceDistribution(choiceLogits: ArrayLike<number>, logSumExp: number): ChoiceDistribution | null {
  const n = choiceLogits.length;
  if (n < 2) throw new RangeError(`a distribution needs at least 2 choices, got ${n}`);
  let max = -Infinity;
  for (let i = 0; i < n; i++) max = Math.max(max, choiceLogits[i]);
  if (!Number.isFinite(max) || !Number.isFinite(logSumExp)) return null;
  const e = Array.from(choiceLogits, (z) => Math.exp(z - max));
  const total = e.reduce((s, v) => s + v, 0);
  if (!Number.isFinite(total)) return null; // a NaN logit
  const probabilities = e.map((v) => v / total);
  const score = probabilities.reduce((s, p, i) => s + (p * i) / (n - 1), 0);
  return { probabilities, mass: Math.min(1, Math.exp(max - logSumExp) * total), score: Math.min(1, Math.max(0, score)) };
}

// ---- packing items into forward passes ----

export interface PassLimits {
  /** Most items per pass. */
  batchSize: number;
  /** Most token positions (items × padded length) per pass; one item alone may exceed it. */
  maxTokensPerPass: number;
  /** Most token positions whose widest activation fits one GPU storage binding. */
  maxPositionsPerBinding: number;
}

/**
 * Groups item indices into passes: longest first, so items of similar length share a pass and
 * padding stays small. A pass's padded length is its first (longest) item's.
 */
export function planPasses(lengths: readonly number[], limits: PassLimits): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[b] - lengths[a] || a - b);
  const passes: number[][] = [];
  let pass: number[] = [];
  let T = 0;
  for (const i of order) {
    const rows = (pass.length + 1) * T;
    if (pass.length > 0 && (pass.length >= limits.batchSize || rows > limits.maxTokensPerPass || rows > limits.maxPositionsPerBinding)) {
      passes.push(pass);
      pass = [];
    }
    if (pass.length === 0) T = lengths[i];
    pass.push(i);
  }
  if (pass.length > 0) passes.push(pass);
  return passes;
}

// ---- the model judge ----

export interface ModelJudgeOptions {
  /** Judge name in results and metrics (default "model"). */
  name?: string;
  /** The judge prompt text of a request (default judgePromptText: instruction, criterion, prompt, response, "Answer:"; compactJudgePromptText suits short contexts). */
  buildPrompt?: (request: JudgeRequest) => string;
  /** Prompt text → token ids, with BOS or a chat template (default tokenizer.encode). */
  formatPrompt?: (text: string) => number[];
  /** Between the prompt and a choice (default " ", as in "Answer: yes"). */
  answerPrefix?: string;
  /** Most items per forward pass (default 16). */
  batchSize?: number;
  /** Most token positions per forward pass (default 4096). */
  maxTokensPerPass?: number;
  /** Below this share of next-token probability on the choices an item is unscorable (default 0: off). */
  minChoiceMass?: number;
}

export type ItemOutcome = { ok: true; distribution: ChoiceDistribution; promptTokens: number } | { ok: false; reason: string };

interface Prepared {
  index: number;
  ids: number[];
  choices: ChoiceTokens;
}

function resolveOptions(options: ModelJudgeOptions) {
  const batchSize = options.batchSize ?? 16;
  const maxTokensPerPass = options.maxTokensPerPass ?? 4096;
  const minChoiceMass = options.minChoiceMass ?? 0;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  if (!Number.isInteger(maxTokensPerPass) || maxTokensPerPass < 1) throw new RangeError(`maxTokensPerPass must be a positive integer, got ${maxTokensPerPass}`);
  if (!(minChoiceMass >= 0 && minChoiceMass < 1)) throw new RangeError(`minChoiceMass must be in [0, 1), got ${minChoiceMass}`);
  return { batchSize, maxTokensPerPass, minChoiceMass, answerPrefix: options.answerPrefix ?? ' ' };
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new DOMException('the judge was stopped', 'AbortError');
}

/**
 * The distribution over each request's choices, or why there is none (a rule criterion, a
 * prompt longer than the model's context, choices sharing a first token, a failed pass).
 * Rejects only when `signal` aborts (checked between passes).
 */
export async function judgeChoiceDistributions(
  model: Transformer,
  tokenizer: Tokenizer,
  requests: readonly JudgeRequest[],
  options: ModelJudgeOptions = {},
  signal?: AbortSignal,
  /** Called after each forward pass with the requests that have an outcome so far. */
  onAnswered?: (done: number) => void,
): Promise<ItemOutcome[]> {
  const { batchSize, maxTokensPerPass, answerPrefix } = resolveOptions(options);
  const buildPrompt = options.buildPrompt ?? judgePromptText;
  const formatPrompt = options.formatPrompt ?? ((text: string) => tokenizer.encode(text));
  const c = model.config;
  const V = c.vocabSize;
  const outcomes = new Array<ItemOutcome>(requests.length);
  const prepared: Prepared[] = [];
  const tokensByChoices = new Map<string, ChoiceTokens | string>();

  requests.forEach((request, index) => {
    try {
      const criterion = questionOf(request);
      const key = JSON.stringify(criterion.choices);
      if (!tokensByChoices.has(key)) {
        try {
          tokensByChoices.set(key, choiceTokens(tokenizer, criterion.choices, answerPrefix));
        } catch (e) {
          tokensByChoices.set(key, (e as Error).message);
        }
      }
      const choices = tokensByChoices.get(key)!;
      if (typeof choices === 'string') throw new RangeError(choices);
      const promptIds = formatPrompt(buildPrompt(request));
      if (promptIds.length === 0) throw new RangeError('the judge prompt encodes to no tokens');
      const ids = [...promptIds, ...choices.prefix];
      if (ids.length > c.maxPositions) throw new RangeError(`the judge prompt is ${ids.length} tokens, beyond the judge model's context of ${c.maxPositions}`);
      const bad = [...ids, ...choices.tokens].find((t) => !Number.isInteger(t) || t < 0 || t >= V);
      if (bad !== undefined) throw new RangeError(`token id ${bad} is outside the judge model's vocabulary of ${V}`);
      prepared.push({ index, ids, choices });
    } catch (e) {
      outcomes[index] = { ok: false, reason: (e as Error).message };
    }
  });

  // Widest activation per position (logits exist for each item's last position only).
  const maxBinding = model.rt.device.limits.maxStorageBufferBindingSize;
  const widest = Math.max(c.intermediateSize, c.numHeads * c.headDim, c.hiddenSize);
  const maxPositionsPerBinding = Math.floor(maxBinding / (widest * 4));
  // A pass's [B, V] logits must fit one binding too.
  const rowsPerBinding = Math.floor(maxBinding / (V * 4));
  const fits = prepared.filter((p) => {
    if (p.ids.length <= maxPositionsPerBinding) return true;
    outcomes[p.index] = { ok: false, reason: `the judge prompt is ${p.ids.length} tokens; this GPU binds activations of at most ${maxPositionsPerBinding}` };
    return false;
  });
  const passes = planPasses(
    fits.map((p) => p.ids.length),
    { batchSize: Math.max(1, Math.min(batchSize, rowsPerBinding)), maxTokensPerPass, maxPositionsPerBinding },
  );
  for (const pass of passes) {
    if (signal?.aborted) throw abortError(signal);
    const items = pass.map((i) => fits[i]);
    try {
      const rows = await runPass(model, items);
      items.forEach((item, b) => {
        const distribution = choiceDistribution(rows[b].logits, rows[b].logSumExp);
        outcomes[item.index] = distribution
          ? { ok: true, distribution, promptTokens: item.ids.length }
          : { ok: false, reason: 'the judge model produced non-finite logits' };
      });
    } catch (e) {
      for (const item of items) outcomes[item.index] = { ok: false, reason: `the judge's forward pass failed: ${(e as Error).message}` };
    }
    onAnswered?.(outcomes.reduce((n) => n + 1, 0)); // reduce skips the holes: the outcomes set so far
  }
  if (signal?.aborted) throw abortError(signal);
  return outcomes;
}

/** One prefill pass over left-padded items; per item the choices' logits and the row's logsumexp. */
async function runPass(model: Transformer, items: readonly Prepared[]): Promise<{ logits: Float32Array; logSumExp: number }[]> {
  const { rt } = model;
  const V = model.config.vocabSize;
  const B = items.length;
  const T = Math.max(...items.map((p) => p.ids.length));
  const ids = new Uint32Array(B * T); // padding positions hold token 0 (any valid id; attention skips them)
  const pads = items.map((p, b) => {
    ids.set(p.ids, b * T + T - p.ids.length);
    return T - p.ids.length;
  });
  const rec: Recorder = rt.recorder('model judge');
  // The last position of each row: B contiguous rows of V logits.
  const last = model.prefill(rec, { batch: B, seqLen: T, ids, pads });
  const owned: GPUBuffer[] = [last];
  try {
    // log p(first choice) = z[t_0] − logsumexp(z): the log-prob kernel gives logsumexp for free.
    const first = rt.upload(Uint32Array.from(items.map((p) => p.choices.tokens[0])), 'judge.first_choice');
    owned.push(first);
    const lp = recordLogprobsForward(rt, rec, last, first, { rows: B, vocab: V, temperature: 1 });
    owned.push(lp.logprobs, lp.entropy, lp.rowStats);
    // Gather [choice logits of every item..., log p(first choice) of every item] for one readback.
    const offsets: number[] = [];
    let total = 0;
    for (const p of items) {
      offsets.push(total);
      total += p.choices.tokens.length;
    }
    const picked = rec.scratch((total + B) * 4, 'judge.picked');
    items.forEach((p, b) => p.choices.tokens.forEach((t, i) => rec.copy(last, picked, 4, (b * V + t) * 4, (offsets[b] + i) * 4)));
    rec.copy(lp.logprobs, picked, B * 4, 0, total * 4);
    const read = rec.readF32(picked, total + B);
    await rec.submit();
    const values = await read;
    return items.map((p, b) => {
      const logits = values.slice(offsets[b], offsets[b] + p.choices.tokens.length);
      return { logits, logSumExp: logits[0] - values[total + b] };
    });
  } finally {
    rt.release(...owned);
  }
}

const percent = (x: number) => `${(100 * x).toPrecision(3)}%`;

function describeDistribution(choices: readonly string[], d: ChoiceDistribution): string {
  const ps = choices.map((ch, i) => `P(${JSON.stringify(ch)})=${d.probabilities[i].toFixed(3)}`).join(', ');
  return `${ps}; the choices hold ${percent(d.mass)} of the next-token probability`;
}

/**
 * A judge that scores each question criterion by the model's next-token distribution over the
 * criterion's choices after the judge prompt. Options are checked now (RangeError).
 */
export function modelJudge(model: Transformer, tokenizer: Tokenizer, options: ModelJudgeOptions = {}): Judge {
  const { minChoiceMass } = resolveOptions(options);
  return {
    name: options.name ?? 'model',
    async judge(requests, judgeOptions = {}): Promise<CriterionResult[]> {
      const outcomes = await judgeChoiceDistributions(model, tokenizer, requests, options, judgeOptions.signal, judgeOptions.onAnswered);
      return outcomes.map((o, i) => {
        const r = requests[i];
        const id = r.criterion.id;
        if (!o.ok) return unscorable(id, o.reason);
        const { choices } = r.criterion as QuestionCriterion;
        const reason = describeDistribution(choices, o.distribution);
        if (o.distribution.mass < minChoiceMass) return unscorable(id, `${reason}, below minChoiceMass ${percent(minChoiceMass)}`);
        return { criterion_id: id, status: 'ok', score: o.distribution.score, reason };
      });
    },
  };
}

// ---- the transformers.js zero-shot (NLI) pipeline judge ----

/** What the judge needs of a transformers.js zero-shot-classification pipeline. */
export type ZeroShotClassifier = (
  text: string,
  labels: string[],
  options: { hypothesis_template: string; multi_label: boolean },
) => Promise<{ labels: string[]; scores: number[] }>;

export interface ZeroShotJudgeOptions {
  /** A Hugging Face model id with ONNX weights, e.g. "Xenova/nli-deberta-v3-xsmall". */
  model: string;
  name?: string;
  /** The premise the NLI model reads (default: the prompt and the response). */
  premise?: (request: JudgeRequest) => string;
  /** The hypothesis, `{}` standing for a choice (default: 'The answer to the question "<question>" is {}.'). */
  hypothesis?: (criterion: QuestionCriterion) => string;
  /** Passed to pipeline() (device, dtype, ...). */
  pipelineOptions?: Record<string, unknown>;
  /** Loads the classifier (default: @huggingface/transformers' pipeline('zero-shot-classification', model)). */
  load?: (model: string, pipelineOptions: Record<string, unknown>) => Promise<ZeroShotClassifier>;
}

async function loadTransformersPipeline(model: string, pipelineOptions: Record<string, unknown>): Promise<ZeroShotClassifier> {
  const { pipeline } = await import('@huggingface/transformers');
  const classifier = await pipeline('zero-shot-classification', model, pipelineOptions);
  return classifier as unknown as ZeroShotClassifier;
}

const defaultPremise = (r: JudgeRequest) => `Prompt: ${r.prompt}\nResponse: ${r.completion}`;
// transformers.js fills the first "{}" only: keep the question from holding one.
const defaultHypothesis = (c: QuestionCriterion) => `The answer to the question "${c.judge_question.replaceAll('{}', '{ }')}" is {}.`;

/**
 * A judge on a zero-shot NLI classifier: the choices are the candidate labels, their
 * probabilities (softmax over the labels' entailment scores) give score = Σ p_i · i / (n − 1).
 * The model is fetched on the first call; if it cannot be, the call rejects with a clear message
 * (judgeRollouts then marks every item unscorable) and the next call tries again.
 * Untested against a real model: this machine cannot download one.
 */
export function zeroShotJudge(options: ZeroShotJudgeOptions): Judge {
  if (typeof options?.model !== 'string' || options.model.trim() === '') throw new RangeError('zeroShotJudge: model must be a Hugging Face model id');
  const load = options.load ?? loadTransformersPipeline;
  const premise = options.premise ?? defaultPremise;
  const hypothesis = options.hypothesis ?? defaultHypothesis;
  let classifier: Promise<ZeroShotClassifier> | null = null;
  const getClassifier = () => {
    classifier ??= load(options.model, options.pipelineOptions ?? {}).catch((e: unknown) => {
      classifier = null;
      throw new Error(
        `could not load the zero-shot model "${options.model}" through @huggingface/transformers ` +
          `(it needs network access to the Hugging Face Hub, or a copy in the browser cache): ${(e as Error)?.message ?? String(e)}`,
      );
    });
    return classifier;
  };
  return {
    name: options.name ?? `zero-shot:${options.model}`,
    async judge(requests, judgeOptions = {}) {
      const { signal, onAnswered } = judgeOptions;
      if (signal?.aborted) throw abortError(signal);
      const classify = await getClassifier();
      const out: CriterionResult[] = [];
      for (const r of requests) {
        if (signal?.aborted) throw abortError(signal);
        const id = r.criterion.id;
        try {
          const c = questionOf(r);
          const template = hypothesis(c);
          if (!template.includes('{}')) throw new RangeError('the hypothesis has no "{}" for the choice');
          const result = await classify(premise(r), [...c.choices], { hypothesis_template: template, multi_label: false });
          const probabilities = c.choices.map((choice) => result.scores[result.labels.indexOf(choice)]);
          if (probabilities.some((p) => !(p >= 0 && p <= 1))) throw new Error(`the classifier returned labels ${JSON.stringify(result.labels)} for choices ${JSON.stringify(c.choices)}`);
          const total = probabilities.reduce((s, p) => s + p, 0);
          if (!(total > 0)) throw new Error('the classifier gave every choice probability 0');
          const ps = probabilities.map((p) => p / total);
          const score = Math.min(1, Math.max(0, ps.reduce((s, p, i) => s + (p * i) / (c.choices.length - 1), 0)));
          const reason = c.choices.map((ch, i) => `P(${JSON.stringify(ch)})=${ps[i].toFixed(3)}`).join(', ');
          out.push({ criterion_id: id, status: 'ok', score, reason });
        } catch (e) {
          out.push(unscorable(id, `zero-shot judge failed: ${(e as Error)?.message ?? String(e)}`));
        }
        onAnswered?.(out.length);
      }
      return out;
    },
  };
}
