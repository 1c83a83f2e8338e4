// Batched autoregressive sampling with a KV cache on the GPU. The prompt batch is left-padded
// and prefilled by Transformer.prefill (it fills the cache and computes the head at the last
// position only, reusing its temporaries from layer to layer); then each step runs one token
// per sequence through recordDecodeStep and the sampler kernel, which feeds the next step on
// the GPU. Steps are recorded in chunks (one submission each, one scratch per chunk); after a
// chunk only its token ids are read back, to stop early once every sequence has produced EOS.
// A repetition penalty reads a per-row seen-id bitset: filled from the prompts (their real
// tokens, not the left padding) once, then the sampler adds each drawn id on the GPU.
// src/model/memorySampling.ts (samplingBuffers) mirrors every buffer this file and those two allocate.
import { recordSample, seenBitset, usesSeen } from '../ops/sample';
import { createKvCache, recordDecodeStep, releaseKvCache } from './decode';
import { RecordingScratch } from './scratch';
import type { Transformer } from './transformer';

/** TRL GRPOConfig names. */
export interface GenerationConfig {
  max_completion_length: number;
  /** 0 means greedy. */
  temperature: number;
  /** 0 disables. */
  top_k: number;
  /** 1 disables. */
  top_p: number;
  /** HF/TRL repetition_penalty: 1 (default) disables. */
  repetition_penalty?: number;
  /** HF/TRL min_p: 0 / null / undefined disables. */
  min_p?: number | null;
  seed: number;
}

export interface GenerationOptions {
  eosTokenId: number;
  /** Global index of prompt 0's row: rows with the same prompt still draw different numbers. */
  rowOffset?: number;
  /** Decode steps per submission (default 16). */
  stepsPerSubmit?: number;
  /**
   * Called after each submission with the decode steps run so far (of max_completion_length) and
   * each sequence's ids so far (up to its EOS): the ids the early-stop check reads back anyway,
   * so progress costs no extra submission or readback.
   */
  onChunk?: (steps: number, maxSteps: number, partial: readonly (readonly number[])[]) => void;
}

export interface GenerationResult {
  /** Per sequence: the sampled ids, up to and including the first EOS. */
  completions: number[][];
  /**
   * Per sequence: log softmax(logits / temperature) of each sampled id (0 when greedy), of the
   * unpenalised logits even with a repetition penalty: the policy's log-prob, as TRL recomputes it
   * for old_per_token_logps. This is TRL's transformers-generate path. TRL's vLLM path also asks
   * vLLM for processed_logprobs (penalty, temperature included) and, with
   * vllm_importance_sampling_correction (on by default there), weights tokens by the capped
   * π_θ / q, which then also corrects for the penalty's change to the sampling distribution;
   * the page has no such correction (it samples and trains with the same weights and kernels).
   */
  logprobs: number[][];
  /** True where max_completion_length ended the sequence before EOS. */
  truncated: boolean[];
  submits: number;
  seconds: number;
  /** Sampled tokens (batch x steps run) per second, prefill included in the time. */
  tokensPerSecond: number;
}

export function validateGenerationConfig(cfg: GenerationConfig): void {
  if (!Number.isInteger(cfg.max_completion_length) || cfg.max_completion_length < 1) {
    throw new RangeError(`max_completion_length must be a positive integer, got ${cfg.max_completion_length}`);
  }
  if (!(cfg.temperature >= 0) || !Number.isFinite(cfg.temperature)) throw new RangeError(`temperature must be >= 0, got ${cfg.temperature}`);
  if (!Number.isInteger(cfg.top_k) || cfg.top_k < 0) throw new RangeError(`top_k must be an integer >= 0, got ${cfg.top_k}`);
  if (!(cfg.top_p > 0 && cfg.top_p <= 1)) throw new RangeError(`top_p must be in (0, 1], got ${cfg.top_p}`);
  const penalty = cfg.repetition_penalty ?? 1;
  if (!(penalty > 0) || !Number.isFinite(penalty)) throw new RangeError(`repetition_penalty must be a finite number > 0 (1 disables), got ${penalty}`);
  const minP = cfg.min_p ?? 0;
  if (!(minP >= 0 && minP <= 1)) throw new RangeError(`min_p must be in [0, 1] (0 disables), got ${minP}`);
  if (!Number.isInteger(cfg.seed) || cfg.seed < 0 || cfg.seed > 0xffffffff) throw new RangeError(`seed must be a 32-bit unsigned integer, got ${cfg.seed}`);
}

export async function generate(
  model: Transformer,
  prompts: readonly (readonly number[])[],
  cfg: GenerationConfig,
  options: GenerationOptions,
): Promise<GenerationResult> {
  validateGenerationConfig(cfg);
  const { rt, config: c } = model;
  const B = prompts.length;
  if (B < 1) throw new RangeError('generate needs at least one prompt');
  prompts.forEach((p, i) => {
    if (p.length < 1) throw new RangeError(`prompt ${i} is empty: start it with at least one token (e.g. BOS)`);
  });
  const P = Math.max(...prompts.map((p) => p.length));
  const maxNew = cfg.max_completion_length;
  const total = P + maxNew;
  if (total > c.maxPositions) {
    throw new RangeError(`prompt (${P} tokens) + max_completion_length (${maxNew}) exceeds the model's context of ${c.maxPositions}`);
  }
  const t0 = performance.now();
  const submitsBefore = rt.counters.submits;
  const pads = prompts.map((p) => P - p.length);
  const ids = new Uint32Array(B * P);
  prompts.forEach((p, b) => ids.set(p, b * P + pads[b]));
  const cache = createKvCache(model, B, total);
  const padBuf = rt.upload(Uint32Array.from(pads), 'generate.pads');
  const outTokens = rt.storage(B * maxNew * 4, 'generate.tokens');
  const outLogprobs = rt.storage(B * maxNew * 4, 'generate.logprobs');
  const sampling = {
    temperature: cfg.temperature,
    topK: cfg.top_k,
    topP: cfg.top_p,
    repetitionPenalty: cfg.repetition_penalty ?? 1,
    minP: cfg.min_p ?? 0,
    seed: cfg.seed,
    rowOffset: options.rowOffset ?? 0,
  };
  const V = c.vocabSize;
  // Without a penalty the sampler never reads it, but its binding needs a buffer: the same
  // (small: B × V/32 words) bitset either way, so the memory estimate has one shape.
  const seen = rt.upload(seenBitset(usesSeen(sampling) ? prompts : prompts.map(() => []), V), 'generate.seen');
  const chunk = options.stepsPerSubmit ?? 16;
  const finished = new Array<boolean>(B).fill(false);
  const partial: number[][] = prompts.map(() => []);
  let steps = 0;
  try {
    // Prefill: fills the cache and gives the first logits, [B, V].
    let rec = rt.recorder('generate.prefill');
    const last = model.prefill(rec, { batch: B, seqLen: P, ids, pads }, { cache });
    let prev = recordSample(rt, rec, last, { ...sampling, rows: B, vocab: V, step: 0 }, seen);
    rec.copy(prev.tokens, outTokens, B * 4, 0, 0);
    rec.copy(prev.logprobs, outLogprobs, B * 4, 0, 0);
    rec.releaseAfterSubmit(last, prev.logprobs);

    const readChunk = async (from: number, to: number) => {
      const tokens = rec.readU32(outTokens, B * (to - from), B * from);
      await rec.submit();
      const data = await tokens;
      for (let s = 0; s < to - from; s++) {
        for (let b = 0; b < B; b++) {
          if (finished[b]) continue;
          partial[b].push(data[s * B + b]);
          if (data[s * B + b] === options.eosTokenId) finished[b] = true;
        }
      }
      options.onChunk?.(to, maxNew, partial);
    };
    await readChunk(0, 1);
    steps = 1;
    while (steps < maxNew && !finished.every(Boolean)) {
      rec = rt.recorder('generate.decode');
      const scratch = new RecordingScratch(rt, rec);
      const from = steps;
      const to = Math.min(maxNew, steps + chunk);
      for (let s = from; s < to; s++) {
        const length = P + s; // the token sampled at step s - 1 sits at cache position P + s - 1
        const positions = rt.upload(Uint32Array.from(pads, (pad) => length - 1 - pad), 'generate.positions');
        const logits = recordDecodeStep(model, rec, cache, { tokens: prev.tokens, positions, pads: padBuf, length }, scratch);
        const next = recordSample(rt, rec, logits, { ...sampling, rows: B, vocab: V, step: s }, seen);
        scratch.done(logits);
        rec.copy(next.tokens, outTokens, B * 4, 0, s * B * 4);
        rec.copy(next.logprobs, outLogprobs, B * 4, 0, s * B * 4);
        rec.releaseAfterSubmit(positions, prev.tokens, next.logprobs);
        prev = next;
      }
      scratch.finish();
      await readChunk(from, to);
      steps = to;
    }
    rt.release(prev.tokens);

    rec = rt.recorder('generate.read');
    const tokensRead = rec.readU32(outTokens, B * steps);
    const logprobsRead = rec.readF32(outLogprobs, B * steps);
    await rec.submit();
    const tokens = await tokensRead;
    const lps = await logprobsRead;
    const completions: number[][] = [];
    const logprobs: number[][] = [];
    const truncated: boolean[] = [];
    for (let b = 0; b < B; b++) {
      const seq: number[] = [];
      const lp: number[] = [];
      let ended = false;
      for (let s = 0; s < steps && !ended; s++) {
        seq.push(tokens[s * B + b]);
        lp.push(lps[s * B + b]);
        ended = tokens[s * B + b] === options.eosTokenId;
      }
      completions.push(seq);
      logprobs.push(lp);
      truncated.push(!ended);
    }
    const seconds = (performance.now() - t0) / 1000;
    return { completions, logprobs, truncated, submits: rt.counters.submits - submitsBefore, seconds, tokensPerSecond: (B * steps) / seconds };
  } finally {
    releaseKvCache(model, cache);
    rt.release(padBuf, outTokens, outLogprobs, seen);
  }
}
