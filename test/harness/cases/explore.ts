// Page side of test/browser/explore.test.ts: guided exploration in real GRPO steps on a fresh
// tiny byte-level GPT-2 (context 256, so a scaffolded prompt fits).
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { parseRubric, rubricVersion, type CriterionResult, type Judge } from '../../../src/rubric';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import { mismatchStats, scoreCompletions } from '../../../src/rl/explore/mismatch';
import { grpoStep, type GrpoContext } from '../../../src/rl/grpoStep';
import { LETTER_RUBRIC } from './grpo';

const tok = new ByteTokenizer();

async function context(rt: GpuRuntime, options: GrpoConfigInput, rubricJson: unknown, modelJudge?: Judge): Promise<GrpoContext> {
  const config = configFromHf({ model_type: 'gpt2', vocab_size: tok.vocabSize, n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 256 });
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 11, 0.1)));
  const rubric = parseRubric(rubricJson);
  return {
    rt,
    model,
    reference: null,
    tokenizer: tok,
    formatPrompt: (text) => [tok.bosTokenId, ...tok.encode(`Instruction: ${text}\nResponse: `)],
    rubric,
    rubricVersion: await rubricVersion(rubric),
    modelJudge,
    config: parseGrpoConfig(options),
  };
}

const QUESTION_RUBRIC = {
  name: 'prompt-aware',
  criteria: [{ id: 'good', text: 'A good answer', weight: 1, tier: 'important', judge_question: 'Is it good?', choices: ['0', '1', '2', '3', '4'] }],
};

/**
 * A judge that fails every completion of a prompt starting with "dead" (a group with no reward
 * variance) and scores others by a hash of the completion (almost surely varied). Counts calls.
 */
function promptAwareJudge() {
  const calls = { n: 0 };
  const judge: Judge = {
    name: 'prompt-aware',
    async judge(requests) {
      calls.n++;
      return requests.map((r): CriterionResult => {
        let h = 0;
        for (const ch of r.completion) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
        const score = r.prompt.startsWith('dead') ? 0 : (h % 5) / 4;
        return { criterion_id: r.criterion.id, status: 'ok', score, reason: '' };
      });
    },
  };
  return { judge, calls };
}

/** One step with dynamic sampling; replacement prompts come from `replacements` (by round). */
export async function dynamic(rt: GpuRuntime, input: { options: GrpoConfigInput; prompts: string[]; replacement: string }) {
  const { judge, calls } = promptAwareJudge();
  const ctx = await context(rt, input.options, QUESTION_RUBRIC, judge);
  const drawn: { count: number; round: number }[] = [];
  try {
    const r = await grpoStep(ctx, 0, input.prompts, {
      drawPrompts: (count, round) => {
        drawn.push({ count, round });
        return Array.from({ length: count }, (_, i) => `${input.replacement} r${round} ${i}`);
      },
    });
    return {
      metrics: r.metrics,
      judgeCalls: calls.n,
      drawn,
      rollouts: r.rollouts.map((x) => ({ group: x.group, index: x.index, prompt: x.prompt, completion: x.completion, reward: x.reward, guided: x.guided ?? null })),
    };
  } finally {
    ctx.model.params.destroy();
  }
}

/**
 * One scaffolded step at `step`: the rollouts, and for the guided ones the log-probs of their
 * completions re-scored under the scaffolded prompt (must match the sampler's) and under the
 * original prompt (the mismatch the step reported). Run it with a negligible learning_rate:
 * the re-scoring happens after the step's update.
 */
export async function scaffold(rt: GpuRuntime, input: { options: GrpoConfigInput; step: number }) {
  const ctx = await context(rt, input.options, LETTER_RUBRIC);
  try {
    const B = ctx.config.generation_batch_size / ctx.config.num_generations;
    const prompts = Array.from({ length: B }, (_, i) => `Say word ${i}.`);
    const r = await grpoStep(ctx, input.step, prompts);
    const guided = r.rollouts.filter((x) => x.guided);
    const opts = { padTokenId: tok.padTokenId, temperature: ctx.config.temperature, maxSequences: 8 };
    const underScaffold = await scoreCompletions(rt, ctx.model, guided.map((x) => ctx.formatPrompt(x.prompt + x.guided!.guidance)), guided.map((x) => x.completion_ids), opts);
    const underOriginal = await scoreCompletions(rt, ctx.model, guided.map((x) => ctx.formatPrompt(x.prompt)), guided.map((x) => x.completion_ids), opts);
    let samplerDiff = 0;
    guided.forEach((x, i) => x.logprobs.forEach((lp, t) => (samplerDiff = Math.max(samplerDiff, Math.abs(lp - underScaffold[i][t])))));
    // The reported gap, recomputed here in float64 from the re-scored log-probs.
    const recomputed = mismatchStats(guided.map((x) => x.logprobs), underOriginal);
    const gapDiff = Math.max(0, ...guided.map((x, i) => Math.abs(x.guided!.logprob_gap! - recomputed.per_rollout[i].logprob_gap)));
    // Each guided token's weight in the loss is its truncated importance weight (scaffold_is_cap);
    // a plain rollout's are all 1.
    const cap = ctx.config.scaffold_is_cap;
    let weightDiff = 0;
    guided.forEach((x, i) =>
      x.token_weight!.forEach((w, t) => {
        const expected = cap === null ? 1 : Math.min(Math.exp(underOriginal[i][t] - x.logprobs[t]), cap);
        weightDiff = Math.max(weightDiff, Math.abs(w - expected));
      }),
    );
    const plainWeights = r.rollouts.filter((x) => !x.guided).flatMap((x) => x.token_weight!);
    return {
      metrics: r.metrics,
      samplerDiff,
      gapDiff,
      weightDiff,
      plainWeightsAllOne: plainWeights.length > 0 && plainWeights.every((w) => w === 1),
      guidedWeightsNotAllOne: guided.some((x) => x.token_weight!.some((w) => Math.abs(w - 1) > 1e-3)),
      recomputedGap: recomputed.logprob_gap,
      rollouts: r.rollouts.map((x) => ({ group: x.group, index: x.index, prompt: x.prompt, guided: x.guided ?? null, reward: x.reward, tokens: x.completion_ids.length })),
    };
  } finally {
    ctx.model.params.destroy();
  }
}

/**
 * The rollout inspector on one guided and one plain rollout, the guidance carrying an HTML
 * payload: what the DOM shows (badges, guidance text) and whether any markup came alive.
 */
export async function inspector(_rt: unknown, input: { guidance: string }) {
  const { flushSync, mount, unmount } = await import('svelte');
  const { TrainingSession } = await import('../../../src/ui/lib/session.svelte');
  const { default: RolloutInspector } = await import('../../../src/ui/run/RolloutInspector.svelte');
  const target = document.createElement('div');
  document.body.append(target);
  const session = new TrainingSession();
  session.runExperiment = { model: 'x', prompts: ['Name a fruit'], rubric: LETTER_RUBRIC, config: {} };
  const base = { step: 0, group: 0, prompt: 'Name a fruit', completion_ids: [], logprobs: [], truncated: false, results: [], scores: [], reward: 0.5, advantage: 0 };
  session.history.add(0, [
    { ...base, index: 0, completion: 'apple', guided: { kind: 'scaffold', guidance: input.guidance, criteria: ['has_a'], logprob_gap: 0.25, is_ratio: 0.8 } },
    { ...base, index: 1, completion: 'pear' },
    { ...base, index: 4, completion: 'apples', guided: { kind: 'hindsight', guidance: '\n\nA previous answer: "pear"\nIt missed:\n- has a', criteria: ['has_a'], revises: 1, bonus: 0.25 } },
    { ...base, index: 5, completion: 'an apple', guided: { kind: 'on_demand', guidance: '\n\n- has a', criteria: ['has_a'], natural_mean: 0.125 } },
  ]);
  session.historyVersion++;
  const app = mount(RolloutInspector, { target, props: { session } });
  flushSync();
  await new Promise((r) => setTimeout(r, 200));
  const rollouts = [...target.querySelectorAll('[data-testid=rollout]')];
  const out = {
    badges: rollouts.map((r) => r.querySelector('[data-testid=guided-badge]')?.textContent?.trim() ?? null),
    guidance: [...target.querySelectorAll('[data-testid=guidance]')].map((e) => e.textContent),
    gapShown: rollouts[0]?.textContent?.includes('log-prob gap 0.25') ?? false,
    revises: target.querySelector('[data-testid=guided-revises]')?.textContent?.trim() ?? null,
    kept: target.querySelector('[data-testid=guided-kept]')?.textContent?.trim() ?? null,
    images: target.querySelectorAll('img').length,
    alerted: (window as unknown as { __explorePwned?: boolean }).__explorePwned === true,
  };
  unmount(app);
  target.remove();
  return out;
}

/**
 * One step with hindsight revision and guidance on demand. The judge fails every completion of a
 * "dead" prompt when it first judges the step (the natural rollouts: a failed group) and scores
 * everything else by a hash of the completion, so the dead group gets on-demand rollouts that may
 * beat its natural mean of 0, and failed rollouts of both groups get revisions. Returns what the
 * step labelled, kept and trained, with the token weights expected from the importance weights
 * (re-scored here under the original prompt) times each row's loss-term scale.
 */
export async function guided(rt: GpuRuntime, input: { options: GrpoConfigInput }) {
  const calls = { n: 0 };
  const judge: Judge = {
    name: 'first-call-fails-dead',
    async judge(requests) {
      calls.n++;
      return requests.map((r): CriterionResult => {
        let h = 0;
        for (const ch of r.completion) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
        const score = calls.n === 1 && r.prompt.startsWith('dead') ? 0 : (h % 5) / 4;
        return { criterion_id: r.criterion.id, status: 'ok', score, reason: '' };
      });
    },
  };
  const ctx = await context(rt, input.options, QUESTION_RUBRIC, judge);
  try {
    const r = await grpoStep(ctx, 0, ['dead a', 'live b']);
    const cfg = ctx.config;
    const G = cfg.num_generations;
    const extra = r.rollouts.slice(2 * G);
    const opts = { padTokenId: tok.padTokenId, temperature: cfg.temperature, maxSequences: 8 };
    const underOriginal = await scoreCompletions(rt, ctx.model, extra.map((x) => ctx.formatPrompt(x.prompt)), extra.map((x) => x.completion_ids), opts);
    // dapo: main rows × M_all / M_main, aux rows × c · M_all / M_aux (M: completion tokens).
    const tokens = (rows: typeof r.rollouts) => rows.reduce((s, x) => s + x.completion_ids.length, 0);
    const aux = extra.filter((x) => x.guided!.kind === 'on_demand');
    const all = tokens(r.rollouts);
    const mainScale = all / (all - tokens(aux));
    const auxScale = (r.metrics.exploration!.rise_aux_coef! * all) / tokens(aux);
    let weightDiff = 0;
    extra.forEach((x, i) => {
      const scale = x.guided!.kind === 'on_demand' ? auxScale : mainScale;
      x.token_weight!.forEach((w, t) => {
        const expected = Math.min(Math.exp(underOriginal[i][t] - x.logprobs[t]), cfg.guided_is_cap!) * scale;
        weightDiff = Math.max(weightDiff, Math.abs(w - expected) / Math.max(1, Math.abs(expected)));
      });
    });
    return {
      metrics: r.metrics,
      judgeCalls: calls.n,
      naturalRewards: r.rollouts.slice(0, 2 * G).map((x) => x.reward),
      mainScale,
      weightDiff,
      natural: r.rollouts.slice(0, 2 * G).map((x) => ({ group: x.group, index: x.index, reward: x.reward, guided: x.guided ?? null, weights: x.token_weight })),
      extra: extra.map((x) => ({ group: x.group, index: x.index, prompt: x.prompt, reward: x.reward, advantage: x.advantage, guided: x.guided ?? null, tokens: x.completion_ids.length, weighted: (x.token_weight ?? []).length, entropy: (x.token_entropy ?? []).length })),
    };
  } finally {
    ctx.model.params.destroy();
  }
}
