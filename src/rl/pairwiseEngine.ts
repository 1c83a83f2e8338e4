// The pairwise judge on our engine (judge_verdict "pairwise", issue 13): each comparison is one
// prompt holding both responses (src/rubric/judges/pairwisePrompt.ts), read like the P(yes) judge
// (src/rl/modelJudge.ts: the next-token distribution after the answer cue, no sampling), here over
// the answer tokens "A" and "B":
//   margin = log P("A") − log P("B") = z["A"] − z["B"]       (first token of " A" / " B")
// positive: the first slot wins (src/rubric/pairwise.ts pairWinner). Every comparison of a call goes
// through the model judge's batched passes (sorted by length, left-padded). Each prompt is fitted
// to the judge model's context: the prompt and both responses are cut to the same length when
// they do not fit (fitPairPrompt), so neither slot loses more of its text than the other.
import type { LoadedModel } from '../model/load';
import type { JudgeRequest } from '../rubric/judge';
import { PAIR_CHOICES, compactPairPromptText, fitPairPrompt, pairPromptText, type PairMaterial } from '../rubric/judges/pairwisePrompt';
import { questionOf } from '../rubric/judges/modelJudgePrompt';
import type { PairOutcome, PairScorer } from '../rubric/pairwiseJudge';
import { choiceTokens, judgeChoiceDistributions } from './modelJudge';

/** The answer tokens' margin from their renormalised probabilities (float64); null when not finite. */
export function pairMargin(probabilities: readonly number[]): number | null {
  const m = Math.log(probabilities[0]) - Math.log(probabilities[1]);
  return Number.isFinite(m) ? m : null;
}

export interface EnginePairOptions {
  /** The compact prompt (short contexts) instead of the full one. */
  compact?: boolean;
  /** Most comparisons per forward pass (the model judge's default otherwise). */
  batchSize?: number;
}

/** A pair scorer on a model of our engine. */
export function enginePairScorer(loaded: Pick<LoadedModel, 'model' | 'tokenizer' | 'formatPrompt'>, options: EnginePairOptions = {}): PairScorer {
  const build = options.compact ? compactPairPromptText : pairPromptText;
  const answerPrefix = ' ';
  return async (pairs, { signal, onAnswered }) => {
    const out = new Array<PairOutcome>(pairs.length);
    // The context left after the answer prefix's own tokens (a byte tokenizer's " " before the letter).
    const prefix = choiceTokens(loaded.tokenizer, PAIR_CHOICES, answerPrefix).prefix.length;
    const budget = loaded.model.config.maxPositions - prefix;
    const texts = new Map<JudgeRequest, string>();
    const asked: { k: number; request: JudgeRequest }[] = [];
    pairs.forEach((m: PairMaterial, k) => {
      try {
        const criterion = questionOf(m.request);
        const fitted = fitPairPrompt(m, build, loaded.formatPrompt, budget);
        const request: JudgeRequest = { ...m.request, criterion: { ...criterion, choices: [...PAIR_CHOICES] } };
        texts.set(request, fitted.text);
        asked.push({ k, request });
      } catch (e) {
        out[k] = { ok: false, reason: (e as Error).message };
      }
    });
    const outcomes = await judgeChoiceDistributions(
      loaded.model,
      loaded.tokenizer,
      asked.map((a) => a.request),
      { buildPrompt: (r) => texts.get(r)!, formatPrompt: loaded.formatPrompt, answerPrefix, ...(options.batchSize ? { batchSize: options.batchSize } : {}) },
      signal,
      onAnswered,
    );
    outcomes.forEach((o, i) => {
      const k = asked[i].k;
      if (!o.ok) {
        out[k] = { ok: false, reason: o.reason };
        return;
      }
      const margin = pairMargin(o.distribution.probabilities);
      out[k] = margin === null ? { ok: false, reason: 'the judge model gave "A" or "B" no probability at all' } : { ok: true, margin };
    });
    return out;
  };
}
