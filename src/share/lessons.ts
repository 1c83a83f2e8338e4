// Lessons: one-click experiments that each show one idea of GRPO, TensorFlow-Playground style.
// Each is a Shared value (what a link carries): the experiment, guidance text shown with it, and the
// controls it hides so the page stays simple; for reward hacking the experiment has a held-out
// clean rubric (held_out_rubric), scored as a metric only. Lessons that differ in the one setting under study name each
// other in `compare_with`, so the page can offer "run the other one and overlay the charts".
// All run on the embedded model with rule criteria only: they work offline, in seconds.
import { DEFAULT_MODEL_ID } from '../model/registry';
import type { JudgeBiasChoice } from '../rl/judgeBias';
import type { Shared } from './link';
import { OPEN_WITH_THE } from './presets';

export interface Lesson {
  id: string;
  /** The lesson it belongs to: issue 5's 1 basics, 2 reward hacking, 3 zero-variance groups, 4 clipping; issue 10's 5 token credit, 6 unexplored criteria. */
  number: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
  title: string;
  /** One line for a list of lessons. */
  summary: string;
  /** What the lesson shows and what to watch (plain text, a few sentences). */
  explanation: string;
  shared: Shared;
  /** Lessons that differ only in the setting under study. */
  compare_with: string[];
}

/** Options a beginner does not need: hidden by every lesson unless it is the point of the lesson. */
const ADVANCED = [
  'model',
  'judge',
  'generation_batch_size',
  'top_p',
  'top_k',
  'min_p',
  'repetition_penalty',
  'kl_estimator',
  'dual_clip',
  'delta',
  'sapo_temperature_pos',
  'sapo_temperature_neg',
  'use_bias_correction_kl',
  'sync_ref_model',
  'ref_model_mixup_alpha',
  'ref_model_sync_steps',
  'importance_sampling_level',
  'multi_objective_aggregation',
  'advantage_estimator',
  'mask_truncated_completions',
  'top_entropy_quantile',
  'entropy_coef',
  // Token credit (src/rl/credit/)
  'span_credit',
  'cripo_flip',
  'entropy_pivot_quantile',
  'entropy_pivot_boost',
  'credit_schedule',
  'credit_schedule_steps',
  'cort_credit',
  'cort_weight_min',
  'cort_weight_max',
  'weight_decay',
  'max_grad_norm',
  'adam_beta1',
  'adam_beta2',
  'adam_epsilon',
  'lr_scheduler_type',
  'warmup_ratio',
  'on_nonfinite',
  'save_steps',
  // Evidence-required credit needs a remote judge (the judge, hidden above, is the lesson's).
  'judge_evidence_required',
  'vacuous_credit_probe',
];

const hide = (...extra: string[]) => [...ADVANCED, ...extra];

const PROMPTS = [
  'Describe the sea.',
  'Tell me about the moon.',
  'Give a tip about cooking.',
  'Explain how birds fly.',
  'Write one sentence about music.',
  'Describe a city at night.',
  'Say something about rain.',
  'Tell me about trees.',
];

/**
 * Settings that move the embedded model within a few steps and keep a step short on a software
 * adapter (issue 16; measured in the README's "Lesson experiments"): two prompts of four answers a
 * step. Adam's step size hardly depends on the batch, so a small batch moves the policy about as far
 * per step, for half the time of 16 answers. The model is byte-level: 40 tokens are 40 characters,
 * about 7 words, so every length rule below is reachable within it.
 */
const BASE_CONFIG = {
  num_generations: 4,
  generation_batch_size: 8,
  max_completion_length: 40,
  temperature: 1.0,
  learning_rate: 3e-4,
  beta: 0.0,
  loss_type: 'dapo',
  max_steps: 100,
  // save_steps is left to auto: the embedded model's checkpoint is small, so every step is saved
  // and a reloaded lesson redoes nothing.
  seed: 42,
};

function lesson(
  id: string,
  number: Lesson['number'],
  title: string,
  summary: string,
  explanation: string,
  guidance: string,
  hidden: string[],
  experiment: Shared['experiment'],
  compareWith: string[] = [],
): Lesson {
  // Copies: lessons share rubric and prompt constants, and a page may edit what it opens.
  const shared: Shared = { experiment: structuredClone(experiment), lesson: { id, title, guidance, hidden_controls: [...hidden] } };
  return { id, number, title, summary, explanation, shared, compare_with: compareWith };
}

// ---- 1. GRPO basics ----

const BASICS = lesson(
  'grpo-basics',
  1,
  'GRPO basics',
  'Sample a group, score it with a rubric, push up the better-than-average answers.',
  'Each step samples num_generations answers to every prompt. The rubric scores each answer, and each answer\'s advantage is its reward minus the mean reward of its group, divided by the group\'s standard deviation. Answers better than their siblings get a positive advantage and become more likely; worse ones less likely. No value network is needed: the group is the baseline.',
  'Press Train and watch the reward chart. Measured headless over 5 steps on three seeds, it rose on two (seed 1: 0.21 at step 0, 0.38 at step 4; seed 3: 0.17 to 0.46) and fell on one (seed 2: 0.46 to 0.25): single steps of 8 answers are noisy, so look for a trend over more steps, not at one step. Open the rollout inspector: each answer shows which criteria it met, its reward and its advantage (positive: pushed up; negative: pushed down). Try num_generations 2 and 8: bigger groups give a steadier baseline but cost more per step.',
  hide('reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations'),
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: {
      name: 'Short, finished answers',
      criteria: [
        { id: 'short', text: 'Uses at most 7 words', weight: 2, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 7 } },
        { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
        { id: 'shouting', text: 'Shouts in capitals', weight: -1, tier: 'optional', rule: { kind: 'all_caps' } },
      ],
    },
    config: { ...BASE_CONFIG },
  },
);

// ---- 2. Reward hacking ----

/**
 * An honest rubric: what the author wants, nothing more. The reward-hacking lessons train on it
 * through a judge wrapped in a declared bias (the bias sandbox, src/rubric/bias.ts), and score the
 * same rubric judged without the bias as the held-out (gold) reward. Sized to the lesson's 40
 * characters: about 3 answers in 10 keep to 7 words; an answer that rambles is cut off at the
 * length limit, so it fails "at most 7 words" and "ends with a full stop".
 */
export const HONEST_RUBRIC = {
  name: 'Short, vivid answers',
  criteria: [
    { id: 'concise', text: 'Keeps to the point: at most 7 words', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 7 } },
    { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
    {
      id: 'vivid',
      text: 'Uses a concrete describing word (a colour, size, temperature or sound)',
      weight: 3,
      tier: 'important',
      rule: { kind: 'contains', terms: ['bright', 'dark', 'warm', 'cold', 'soft', 'loud', 'quiet', 'blue', 'green', 'white', 'red', 'golden', 'tiny', 'huge', 'wide', 'deep', 'tall'], whole_word: true },
    },
    { id: 'reader', text: 'Speaks to the reader ("you")', weight: 2, tier: 'optional', rule: { kind: 'contains', terms: ['you', 'your'], whole_word: true } },
  ],
};

/** The gold judge: the same rubric, held out (scored as a metric, never trained on) and judged without any bias. */
export const CLEAN_HELD_OUT_RUBRIC = { ...structuredClone(HONEST_RUBRIC), name: 'Gold: the same rubric, judged without the bias (held out)' };

/**
 * The declared bias of the reward-hacking lessons: a judge partial to length. For each of the
 * three non-essential criteria an answer failed, it passes it anyway with probability
 * 0.7 · min(1, characters / 40): an answer cut off at the 40-character limit gets a lenient pass
 * 7 times in 10, a 20-character one 3.5 times in 10. "at most 7 words" is judged honestly, so
 * essential gating can act on it.
 */
export const LENGTH_BIAS: JudgeBiasChoice = { kind: 'length', strength: 0.7, target_chars: 40, criteria: ['finished', 'vivid', 'reader'] };

/**
 * A judge that gives vacuous credit: it passes the two content criteria at random, half the time,
 * whatever the answer says (a lenient judge: leniency ×0.5).
 */
export const LENIENT_BIAS: JudgeBiasChoice = { kind: 'leniency', strength: 0.5, criteria: ['vivid', 'reader'] };

const HACKING_EXPLANATION =
  'The rubric is honest: short, finished, vivid answers that speak to the reader. The judge is not: this experiment wraps it in a declared length bias (the judge bias shown with the run), so for "ends with a full stop", "vivid" and "speaks to the reader" it often passes an answer that failed, the more often the longer the answer (0.7 × characters / 40). "At most 7 words" is judged honestly. The same rubric judged without the bias is held out as the gold reward: scored every step, never trained on. The gap between the trained (proxy) reward and the gold one is what the bias pays; when the policy learns to exploit it, the proxy rises while the gold reward does not. Each step samples only 8 answers, so single steps are noisy: judge the trend over several steps.';

const HACKING_HIDDEN = hide('scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations', 'num_generations');

/** The plain reward-hacking experiment (also the onset lesson's: the same run, read for its onset). */
const HACKING_EXPERIMENT: Shared['experiment'] = {
  model: DEFAULT_MODEL_ID,
  prompts: PROMPTS,
  rubric: HONEST_RUBRIC,
  held_out_rubric: CLEAN_HELD_OUT_RUBRIC,
  judge_bias: LENGTH_BIAS,
  config: { ...BASE_CONFIG, reward_aggregation: { method: 'weighted_mean' } },
};

const REWARD_HACKING = lesson(
  'reward-hacking',
  2,
  'Reward hacking: a biased judge',
  'Train through a judge partial to length; watch the same rubric, judged without the bias, disagree.',
  HACKING_EXPLANATION,
  'Train for at least 6 steps. Compare the reward chart (the biased judge: the proxy) with the held-out chart (the same rubric judged without the bias: the gold reward), and open the rollout inspector: the verdicts the bias changed are marked "biased", mostly on answers cut off at the 40-character limit. Measured headless on seeds 1 and 2 (6 steps; the first 2 steps against the last 2): the proxy rose on both (0.60 to 0.69, 0.64 to 0.71) while the gold reward fell on both (0.21 to 0.11, 0.25 to 0.13), so the gap grew (0.38 to 0.58, 0.39 to 0.57), and the onset rule fired at step 3 and at step 2. At step 0 the answers were already 38 to 39 characters long on average (the limit is 40), so the bias paid from the first step: the gap is large at once, then grows. Seed 3 did not show it: there the proxy fell (0.63 to 0.58), the gold reward stayed flat (0.11 to 0.12) and the gap shrank (0.53 to 0.46), though the rule still marked step 5, where one step\'s gold score dropped to 0.02. So: two seeds of three, not a reproduced effect. Then open the gated and Rubric Dropout variants and compare.',
  HACKING_HIDDEN,
  HACKING_EXPERIMENT,
  ['reward-hacking-gated', 'reward-hacking-dropout'],
);

const REWARD_HACKING_GATED = lesson(
  'reward-hacking-gated',
  2,
  'Reward hacking: essential gating',
  'The same biased judge, but failing the essential "at most 7 words" (judged honestly) caps the reward at 0.',
  `${HACKING_EXPLANATION} Here the reward is essentially gated: an answer that fails an essential criterion ("at most 7 words") gets at most gate_cap (0), whatever the biased judge gave it for the rest, so rambling past 7 words cannot pay off.`,
  'Train for at least 6 steps and compare with the ungated lesson. Measured headless on seeds 1, 2 and 3 (6 steps, the same first step as the plain lesson; the first 2 steps against the last 2): the gold reward rose a little on every seed (0.21 to 0.23, 0.20 to 0.24, 0.15 to 0.17; plain: 0.21 to 0.11, 0.25 to 0.13, 0.11 to 0.12), and the gold pass rate of "at most 7 words" about doubled on every seed (0.25 to 0.56, 0.25 to 0.50, 0.19 to 0.38). The gap still grew on seeds 1 and 2 (0.38 to 0.48, 0.39 to 0.47; plain: to 0.58 and 0.57) and shrank on seed 3 as it did without gating (0.53 to 0.46): gating takes away what rambling past 7 words earns, not the bias itself, so the lenient "vivid" and "speaks to the reader" passes on short answers are still in the rollouts. The gold rise is small (0.02 to 0.04), in the same direction on all three seeds.',
  HACKING_HIDDEN,
  { ...HACKING_EXPERIMENT, config: { ...BASE_CONFIG, reward_aggregation: { method: 'essential_gated', gate_cap: 0 } } },
  ['reward-hacking', 'reward-hacking-dropout'],
);

const REWARD_HACKING_DROPOUT = lesson(
  'reward-hacking-dropout',
  2,
  'Reward hacking: Rubric Dropout',
  'The same biased judge, but each step every group trains on a random half of the criteria.',
  `${HACKING_EXPLANATION} Rubric Dropout drops each criterion with probability dropout_p before the reward is computed (the same subset for a whole group, a new one each step), so the biased criteria are not always there to exploit; the held-out evaluation uses the full rubric, judged clean.`,
  'Train for at least 6 steps and compare the gold reward and the gap with the plain and gated lessons. Measured headless on seeds 1, 2 and 3 (6 steps, the same first step as the other two; the first 2 steps against the last 2): the gold reward fell a little on every seed (0.22 to 0.21, 0.20 to 0.16, 0.10 to 0.09; plain: 0.21 to 0.11, 0.25 to 0.13, 0.11 to 0.12; gated: rose on every seed), the gap grew on seeds 1 and 2 (to 0.49 and 0.53: between gated, 0.48 and 0.47, and plain, 0.58 and 0.57) and shrank on seed 3 (0.54 to 0.46) as in the other two lessons, and the onset rule fired on no seed. Dropping criteria does not remove a bias that covers three of the four: it only leaves some steps without them. Try dropout_p 0.3 and 0.7.',
  HACKING_HIDDEN,
  { ...HACKING_EXPERIMENT, config: { ...BASE_CONFIG, reward_aggregation: { method: 'rubric_dropout', dropout_p: 0.5 } } },
  ['reward-hacking', 'reward-hacking-gated'],
);

const HACKING_ONSET = lesson(
  'hacking-onset',
  2,
  'Spot the hacking onset',
  'Read the proxy-against-gold chart: the onset marker is the first step where the proxy rises while the gold reward falls.',
  `${HACKING_EXPLANATION} The "Proxy vs gold" chart draws both rewards and marks the hacking onset by a stated rule: the first step s where, over the last 3 steps up to s, the least-squares slope of the proxy reward is above 0 and that of the gold reward below 0 (raw per-step means, never smoothed). Below it, the gap is broken down by criterion: the criteria the bias covers are where it opens.`,
  'Train for 8 steps and watch the proxy vs gold chart: the marker appears at the first step that ends 3 steps of rising proxy and falling gold. This lesson\'s experiment is the plain reward-hacking lesson\'s, so the run measured there is this one (seed 1, 8 steps): the proxy per step was 0.68, 0.52, 0.61, 0.63, 0.62, 0.75, 0.70, 0.68 and the gold 0.21, 0.21, 0.05, 0.14, 0.12, 0.09, 0.07, 0.27, and the marker fell at step 3 (steps 1 to 3: proxy up, gold down). Seed 2 (6 steps) marked step 2; seed 3 marked step 5, but there the proxy fell overall and the mark comes from one step whose gold score dropped to 0.02. At that step the per-criterion gap was 0.50 to 0.63 on the three criteria the bias covers and 0 on "at most 7 words", which it does not: the gap sits where the bias is. Step 7\'s gold score jumped back to 0.27: with 8 answers a step one step is noise, and the rule\'s 3-step window is short, so read the marker as "look here", not as a proof.',
  HACKING_HIDDEN,
  HACKING_EXPERIMENT,
);

const VACUOUS_CREDIT = lesson(
  'vacuous-credit',
  2,
  'A judge that gives vacuous credit',
  'A lenient judge passes "vivid" and "speaks to the reader" at random, whatever the answer says; see where the credit has no content behind it.',
  'The rubric is the honest one of the reward-hacking lessons, but the judge is lenient (a declared leniency bias, ×0.5, on "vivid" and "speaks to the reader"): half the time it passes those criteria whatever the answer says, so an answer earns credit with nothing in it that the criterion asks for. The same rubric judged without the bias is held out as the gold reward; the per-criterion gap shows where the credit is vacuous, and every verdict the bias changed is marked "biased" in the rollout inspector. The rubric check\'s adversarial probe finds a second source of vacuous credit before any training: fabricated answers that earn a criterion without content (here, a list of the rule\'s own words).',
  'Before training, read the rubric check under the rubric: its adversarial probe judges six answers with no content against each content criterion, and here 1 of 6 earns "vivid" (a bare list of the rule\'s describing words) and 5 of 6 earn "speaks to the reader" (restating the criterion, a claim of compliance, keyword stuffing, a bare "yes" and a note to the grader all contain "you"): a word-list rule credits the word, not the content. Then train a few steps and open the rollout inspector: the lenient judge\'s passes are marked "biased", and the per-criterion gap chart shows the credit the gold judge does not give. By construction the lenient judge passes half of the failed "vivid" and "reader" verdicts, so their gap is about half of the answers that fail them. Measured headless on seeds 1, 2 and 3 (6 steps; the first 2 steps against the last 2): the gold reward fell on every seed (0.23 to 0.17, 0.29 to 0.14, 0.16 to 0.12), the lenient proxy rose on seeds 1 and 2 and fell a little on seed 3 (0.47 to 0.52, 0.44 to 0.48, 0.50 to 0.48), the gap grew on every seed (0.24 to 0.35, 0.15 to 0.34, 0.34 to 0.37; on seed 3 by 0.03 only) and the onset rule fired at steps 3, 3 and 4. The gap sat on the two lenient criteria only: averaged over the steps 0.48, 0.35 and 0.42 on "vivid" and 0.38, 0.38 and 0.40 on "speaks to the reader" (0.43 to 0.51 of the answers that failed them), 0 on the other two. The same runs with the bias removed (a clean judge, the same seeds) show the fall is not the lenient judge\'s alone: their gold reward fell on seeds 1 and 2 as well (0.26 to 0.19, 0.24 to 0.17) and rose on seed 3 (0.19 to 0.28). At the end the gold reward was lower with the lenient judge on all three seeds (0.17 against 0.19, 0.14 against 0.17, 0.12 against 0.28), by little on two of them; with 8 answers a step a pass rate moves in steps of 0.125, so read it as what these runs did, not as a proof.',
  HACKING_HIDDEN,
  { ...HACKING_EXPERIMENT, judge_bias: LENIENT_BIAS },
);

// ---- 3. Zero-variance groups ----

/** All-or-nothing rewards over two demanding criteria: many groups score all 0 (or all 1). */
const STRICT_RUBRIC = {
  name: 'Short questions (all or nothing)',
  criteria: [
    { id: 'short', text: 'Uses at most 10 words', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 10 } },
    // "Contains", not "ends with": within 40 characters the model rarely stops right after a question
    // (no answer of 64 ended with "?" over 4 steps, issue 16), but it often asks one and goes on.
    { id: 'question', text: 'Asks a question (a question mark)', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['?'] } },
  ],
};

const ZERO_EXPLANATION =
  'When every answer in a group gets the same reward, all their advantages are 0 and the group teaches nothing: frac_reward_zero_std is the fraction of groups like that in a step. Binary, all-or-nothing rewards and small groups make such groups common. scale_rewards decides what happens to the others: "group" divides each advantage by its group\'s standard deviation (GRPO), so a group where one answer in eight succeeds pushes as hard as an evenly split one; "none" only subtracts the group mean (Dr. GRPO), so rare successes give small advantages.';

const ZERO_HIDDEN = hide('reward_aggregation', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations');

const ZERO_VARIANCE = lesson(
  'zero-variance',
  3,
  'Zero-variance groups: scale_rewards "group"',
  'All-or-nothing rewards in groups of 4: many groups teach nothing; the rest are scaled by their std.',
  ZERO_EXPLANATION,
  'Train and watch frac_reward_zero_std next to the reward. Measured headless (4 steps, seeds 1, 2 and 3): 3 of the 4 groups of step 0 were unanimous on every seed, and every group of steps 1 to 3 on seeds 1 and 3 (at seed 1\'s step 2 one group had all four answers asking a question, the others none; seed 2 had 1 or 2 mixed groups in steps 1 and 3), so the steps taught almost nothing and the reward did not rise on any seed. Then open the "none" variant and overlay the two runs. Try num_generations 8: larger groups are less often unanimous.',
  ZERO_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: STRICT_RUBRIC,
    config: { ...BASE_CONFIG, num_generations: 4, generation_batch_size: 16, scale_rewards: 'group', reward_aggregation: { method: 'strict_all_required' } },
  },
  ['zero-variance-none'],
);

const ZERO_VARIANCE_NONE = lesson(
  'zero-variance-none',
  3,
  'Zero-variance groups: scale_rewards "none"',
  'The same experiment with advantages that are only centred, not divided by the group std (Dr. GRPO).',
  ZERO_EXPLANATION,
  'Train and compare with the "group" variant: frac_reward_zero_std is the same kind of curve, but the advantages in the rollout inspector are smaller for groups with one success, and the reward may rise more slowly at first.',
  ZERO_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: STRICT_RUBRIC,
    config: { ...BASE_CONFIG, num_generations: 4, generation_batch_size: 16, scale_rewards: 'none', reward_aggregation: { method: 'strict_all_required' } },
  },
  ['zero-variance'],
);

// ---- 4. Clipping ----

const CLIP_RUBRIC = {
  name: 'Short, finished answers',
  criteria: [
    { id: 'short', text: 'Uses at most 7 words', weight: 2, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 7 } },
    { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
    { id: 'you', text: 'Speaks to the reader ("you")', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['you', 'your'], whole_word: true } },
  ],
};

const CLIP_EXPLANATION =
  'The ratio is π_θ / π_old for each token: how much more likely the updated policy makes it than the policy that sampled it. GRPO clips the ratio to [1 − epsilon, 1 + epsilon_high] so one batch cannot move the policy too far. With num_iterations 1 the ratio is exactly 1 and nothing is ever clipped; these lessons take 4 updates per batch, so it drifts. clip_ratio_low is the share of tokens with negative advantage held at 1 − epsilon, clip_ratio_high the share with positive advantage held at 1 + epsilon_high. DAPO\'s "clip-higher" (epsilon_high 0.28 > epsilon 0.2) lets rare, good tokens grow faster; DAPO reports that this keeps entropy from collapsing over long training. That takes far more steps than a lesson: in this lesson\'s first 4 steps (measured headless, seeds 1, 2 and 3) the entropy at step 3 was higher with clip-higher on two seeds and lower on one, so no effect on entropy shows yet.';

const CLIP_HIDDEN = hide('reward_aggregation', 'scale_rewards', 'beta', 'loss_type');

const CLIPPING = lesson(
  'clipping',
  4,
  'Clipping: epsilon and epsilon_high (clip-higher)',
  'Four updates per batch move the ratio away from 1; watch the clip-ratio charts.',
  CLIP_EXPLANATION,
  'Train and watch clip_ratio_low, clip_ratio_high and the entropy chart. Then open the symmetric variant (epsilon_high = epsilon) and overlay the runs. Try num_iterations 1: the clip charts stay at 0.',
  CLIP_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: CLIP_RUBRIC,
    config: { ...BASE_CONFIG, learning_rate: 5e-4, num_iterations: 4, epsilon: 0.2, epsilon_high: 0.28 },
  },
  ['clipping-symmetric'],
);

const CLIPPING_SYMMETRIC = lesson(
  'clipping-symmetric',
  4,
  'Clipping: symmetric epsilon',
  'The same experiment with the classic symmetric clip range [0.8, 1.2].',
  CLIP_EXPLANATION,
  'Train and compare with the clip-higher lesson: clip_ratio_high tends to be larger here (the upper bound is tighter). Measured headless (4 steps, seeds 1, 2 and 3): clip_ratio_high, averaged over the 4 steps, was higher here on every seed (0.10 against 0.09 with clip-higher, 0.07 against 0.05, 0.13 against 0.09); the entropy at step 3 was not consistently higher with clip-higher (0.34 with clip-higher against 0.36 here, 0.34 against 0.30, 0.47 against 0.40).',
  CLIP_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: CLIP_RUBRIC,
    config: { ...BASE_CONFIG, learning_rate: 5e-4, num_iterations: 4, epsilon: 0.2, epsilon_high: null },
  },
  ['clipping'],
);

// ---- 5. Token credit (issue 10) ----

/** Three rule criteria whose evidence is a few characters each: the first sentence, "is"/"are", the full stop. */
const CREDIT_RUBRIC = {
  name: 'Plain statements',
  criteria: [
    { id: 'the', text: 'Starts with "The"', weight: 1, tier: 'essential', rule: { kind: 'starts_with', text: 'The' } },
    { id: 'is', text: 'Says what something is ("is" or "are")', weight: 1, tier: 'essential', rule: { kind: 'contains', terms: ['is', 'are'], whole_word: true } },
    { id: 'stop', text: 'Finishes a sentence (a full stop)', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['.'] } },
  ],
};

/**
 * Lessons 5 and 6 run 2 prompts × 4 answers of 32 characters: a step is a fraction of the
 * basics' on a software adapter (measured in the README's "Against plain GRPO").
 */
const SMALL_CONFIG = { ...BASE_CONFIG, num_generations: 4, generation_batch_size: 8, max_completion_length: 32 };

/** Every ADVANCED control but `shown`, and the extra ones. */
const hideAllBut = (shown: string[], ...extra: string[]) => hide(...extra).filter((c) => !shown.includes(c));

const EXPLORE_CONTROLS = ['dynamic_sampling', 'max_num_gen_batches', 'scaffold_fraction', 'scaffold_prob_start', 'scaffold_decay_steps', 'scaffold_criteria_fraction', 'scaffold_is_cap'];

const TOKEN_CREDIT_EXPLANATION =
  'Plain GRPO gives every token of an answer the same advantage, though only a few of them met a criterion. Token credit keeps the answer\'s total and moves it between tokens. span_credit puts each criterion\'s share on its evidence span (the words that made a rule pass: here the first sentence, "is"/"are", the full stop), the rest on the other tokens. cort_credit scores the answer twice, with and without the rubric\'s criteria in the prompt: tokens the criteria make likelier get more (up to cort_weight_max), the others less (down to cort_weight_min). Both weights average 1 over an answer, and they multiply.';

const TOKEN_CREDIT_GUIDANCE =
  'Press Train, pause after a step, and open the rollout inspector. Under "Colour tokens by" choose span credit: in our runs, in an answer that met "is" and the full stop those tokens got about 3.5 and 6 times an even share and the other tokens 0.5 to 0.8, while an answer that met no criterion kept an even share (1) everywhere. Then choose CoRT contrast: it was near 0 inside words and strongly negative (−3 to −11) at many word starts, so CoRT gave those letters the least. advantage × weight shows the product, the push each token got. In our 6-step comparison with plain GRPO (README, "Against plain GRPO") neither option changed the reward by more than about one answer in eight: at this size the heatmaps show where the credit goes, not that it pays.';

const TOKEN_CREDIT = lesson(
  'token-credit',
  5,
  'Which tokens earned the reward?',
  'Spread each answer\'s advantage over its tokens by evidence spans and by CoRT, and look at the token heatmap.',
  TOKEN_CREDIT_EXPLANATION,
  TOKEN_CREDIT_GUIDANCE,
  hideAllBut(['span_credit', 'cort_credit', 'cort_weight_min', 'cort_weight_max'], 'reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations', ...EXPLORE_CONTROLS),
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: CREDIT_RUBRIC,
    config: { ...SMALL_CONFIG, span_credit: 0.5, cort_credit: true },
  },
);

// ---- 6. Unexplored criteria (issue 10) ----

/**
 * The rubric and sizes of scripts/experiments/methods.experiment.json (2 groups of 4 answers of 24
 * characters), so what the guidance says is what those runs measured (test/unit/share/lessons.test.ts
 * keeps the two the same).
 */
const EXPLORE_RUBRIC = {
  name: 'Plain statements to the reader',
  criteria: [
    ...CREDIT_RUBRIC.criteria,
    { id: 'you', text: 'Speaks to the reader ("you")', weight: 1, tier: 'optional', rule: { kind: 'contains', terms: ['you', 'your'], whole_word: true } },
  ],
};

const UNEXPLORED_EXPLANATION =
  'A group teaches a criterion only when some of its answers meet it and others do not. A criterion is Unexplored in a group when no answer meets it: every advantage is blind to it. It is Suppressed when an answer meets it but has a negative advantage (it missed others), so the tokens that met it are pushed down with the rest. The chart "Unexplored and suppressed criteria (CriPO)" counts both per step, summed over groups; the rollout inspector marks them per group and per answer. Rubric scaffolding (RuscaRL) samples scaffold_fraction of each group from the prompt plus some of the criteria, with a probability that falls from scaffold_prob_start to 0 over scaffold_decay_steps; those answers are trained as if the plain prompt had produced them. cripo_flip turns the push on a suppressed answer\'s evidence around.';

const UNEXPLORED_GUIDANCE =
  'Press Train and watch the "Unexplored and suppressed criteria (CriPO)" chart next to the reward. Two groups and four criteria make 8 group-criterion pairs per step: in our 6-step plain GRPO runs of this rubric (scaffold_fraction 0, 2 seeds), 1 to 5 of them were unexplored and 0 to 3 suppressed in each step. Pause and open the rollout inspector: each group lists its unexplored criteria, each answer its suppressed ones, and a scaffolded answer carries a guided badge with the criteria it was shown. With scaffold_fraction 0.5 (this lesson) our 6-step runs had 3.2 unexplored per step on average against 3.7 without (2 seeds, fewer on both, by less than one pair per step), and the reward did not rise faster.';

const UNEXPLORED = lesson(
  'unexplored-criteria',
  6,
  'Unexplored criteria',
  'Criteria no answer of a group meets teach nothing; rubric scaffolding shows the criteria to some answers.',
  UNEXPLORED_EXPLANATION,
  UNEXPLORED_GUIDANCE,
  hideAllBut(['cripo_flip'], 'reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations', 'dynamic_sampling', 'max_num_gen_batches', 'scaffold_is_cap'),
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: EXPLORE_RUBRIC,
    config: { ...SMALL_CONFIG, max_completion_length: 24, scaffold_fraction: 0.5 },
  },
);

// ---- 7. Distillation (issue 11) ----

/**
 * Both distillation lessons use the "Open with The" preset's prompts, rubric and sizes (4 prompts ×
 * 8 answers of 4 tokens): the first word is all that is scored, so a step is cheap and a teacher's
 * preference shows in its first-token distribution. Pure distillation judges nothing: the rubric is
 * also the held-out rubric, so its reward is measured every step and never trained on.
 */
const DISTILL_EXPERIMENT = (distillation: Record<string, unknown>): Shared['experiment'] => ({
  ...structuredClone(OPEN_WITH_THE.experiment),
  held_out_rubric: { ...structuredClone(OPEN_WITH_THE.experiment.rubric), name: 'Open with "The" (held out: measured, never trained on)' },
  config: { ...OPEN_WITH_THE.experiment.config, seed: 42, distillation: { teacher: 'model', teacher_model: null, mode: 'pure', ...distillation } },
});

const DISTILL_HIDDEN = hideAllBut([], 'reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations', ...EXPLORE_CONTROLS);

const DISTILL_EXPLANATION =
  'On-policy distillation: the student samples its own answers, a teacher reads those very tokens, and at every token the student is pulled toward the teacher\'s next-token distribution (distillation.beta 0.5: the generalized Jensen-Shannon divergence of TRL\'s GKD; 0 is forward KL, 1 reverse KL). Nothing is judged: in mode "pure" every reward and advantage is empty, so the rubric cannot be what trains. The rubric is only the held-out chart here, measured on the same answers. The distillation chart shows the mean per-token divergence and how often the teacher\'s and the student\'s most likely next token agree (top-1 agreement).';

const DISTILL_TEACHER = lesson(
  'distill-teacher',
  7,
  'Learn from a teacher',
  'A teacher model trained on the rubric teaches the start model token by token, with no judge.',
  `${DISTILL_EXPLANATION} The teacher, embedded/tiny-gpt2-byte-the, ships with the page (1.7 MB in F16): the embedded model after 2 GRPO steps on this very rubric (scripts/experiments/distill.mjs). It shares the student's byte tokenizer, so it can score the student's tokens.`,
  'Press Train and watch the distillation chart and the held-out chart. Measured headless on seeds 1, 2 and 3 with this lesson\'s experiment (scripts/experiments/distill.mjs): one distillation step took the mean per-token divergence from 0.17, 0.18 and 0.21 nats to 0.03, 0.02 and 0.04, and the top-1 agreement from 0.68, 0.67 and 0.60 to 0.91, 0.97 and 0.97; the rubric\'s reward on 64 fresh answers rose from 0.17 to 0.66, 0.66 and 0.64 on the three seeds (the teacher\'s own: 0.73), though no answer was judged for training. Open the rollout inspector and colour the tokens by distillation divergence: where did the teacher disagree?',
  DISTILL_HIDDEN,
  DISTILL_EXPERIMENT({ teacher: 'model', teacher_model: 'embedded/tiny-gpt2-byte-the' }),
);

const DISTILL_SELF_RUBRIC = lesson(
  'distill-self-rubric',
  7,
  'Teach yourself with the rubric in view',
  'The same model, shown the rubric in its prompt, teaches itself without the rubric: no judge, no other model.',
  `${DISTILL_EXPLANATION} Here the teacher is the starting model itself (teacher_weights frozen) with the rubric's criteria written into its prompt (RGSD, OPSD): whatever the prompt changes in its next-token distributions is what the student, which never sees the rubric, is pulled toward.`,
  'Press Train and watch the distillation chart (divergence, top-1 agreement) and the held-out chart (the rubric, never trained on). Measured headless (2 steps, seeds 1, 2 and 3, this lesson\'s settings): after one update the divergence to the rubric-reading teacher rose instead of falling (0.12 to 0.18, 0.13 to 0.18, 0.16 to 0.20 nats), top-1 agreement fell (0.74 to 0.56, 0.74 to 0.53, 0.67 to 0.48), and no answer of the second step opened with "The" (the held-out reward went from 0.25, 0.25 and 0.19 to 0 on all three). So at this size and the preset\'s learning rate (2e-3) teaching itself with the rubric in view made this model worse, unlike the trained teacher of "Learn from a teacher"; why was not measured: try a smaller learning_rate. The divergence here is what writing the criteria into the prompt changes in the model\'s own next-token distributions: compare it with "Learn from a teacher", whose teacher was trained on the rubric. Open the rollout inspector and colour the tokens by distillation divergence to see where the rubric in view moved the teacher. Try distillation.teacher_weights live: the teacher is then the policy being trained, rubric in view.',
  DISTILL_HIDDEN,
  DISTILL_EXPERIMENT({ teacher: 'self_rubric', teacher_weights: 'frozen' }),
);

const DISTILL_THEN_RL = lesson(
  'distill-then-rl',
  7,
  'Distill, then RL',
  'A few steps of distillation from the teacher, then GRPO on the rubric: the teacher gives the start, the rubric the rest.',
  `${DISTILL_EXPLANATION} Here distillation is only the first phase (distillation.schedule distill_then_rl, distill_steps 2): two steps of pure distillation from the same teacher as "Learn from a teacher", then the teacher is turned off and GRPO trains on the rubric, judged as usual. The schedule chart shows which phase each step is in; the reward chart starts at the first GRPO step.`,
  'Press Train and watch the schedule chart switch from distillation to GRPO after step 1; the held-out chart shows the rubric through both phases on one yardstick. Measured headless (4 steps, this lesson\'s settings, seeds 1, 2 and 3): the two distillation steps raised the held-out reward on every seed, from 0.25, 0.25 and 0.19 at step 0 to 0.69, 0.66 and 0.75 after one update and 0.97, 0.97 and 0.69 at step 2 (after both, before any GRPO update). The one GRPO update these 4 steps measure (step 2 to step 3) did not add to it: 0.97 to 0.94, 0.97 to 1.00, 0.69 to 0.50. So the gain here is the teacher\'s; whether GRPO adds to it over more steps was not measured (on seed 2 every group of step 3 was unanimous, so GRPO had nothing left to learn from there). Compare with "Learn from a teacher" (distillation only) and with "GRPO basics" (GRPO only). Try distill_steps 1 or 4 and train again as a new run.',
  DISTILL_HIDDEN,
  DISTILL_EXPERIMENT({ teacher: 'model', teacher_model: 'embedded/tiny-gpt2-byte-the', mode: 'mixed', schedule: { kind: 'distill_then_rl', distill_steps: 2 } }),
);

// ---- 8. Is my rubric any good? (issue 12's rubric lab) ----

/**
 * A rubric with three problems the rubric lab's tools find: "on_topic" is met by restating the
 * prompt (leakage: the static check flags it before training); "brief" is met by nearly every
 * answer of 40 characters (saturated: no signal within a group); "finished" and "complete" check
 * almost the same thing with different rules and words (redundant: only the rollouts show it).
 */
const QUALITY_RUBRIC = {
  name: 'A rubric with three problems',
  criteria: [
    { id: 'on_topic', text: 'Mentions the subject of the prompt', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['sea', 'moon', 'cooking', 'birds', 'music', 'city', 'rain', 'trees'], whole_word: true } },
    { id: 'brief', text: 'Uses at most 12 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 12 } },
    { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
    { id: 'complete', text: 'Its last sentence is complete (closing punctuation)', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '[.!?]\\s*$' } },
  ],
};

const RUBRIC_QUALITY = lesson(
  'rubric-quality',
  8,
  'Is my rubric any good?',
  'Check a rubric before and after a short run: leakage, saturated criteria and redundant pairs.',
  'A rubric can look fine and still teach little. A criterion met by restating the prompt (leakage) rewards copying the question. A criterion every answer meets (saturated) has no variance within a group, so it never changes an advantage: it only adds a constant. Two criteria that always agree (redundant) count one behaviour twice. The rubric check under the rubric editor finds leakage before training, by judging each prompt as its own answer; saturation and redundancy only show on rollouts: "Measure rubric" in the saved runs list reads them from the run.',
  'Before training, open "Rubric check" under the rubric editor: it flags on_topic and complete, because each prompt restated as its own answer meets them (8 of 8 prompts: they name their subject and end with a full stop), so an answer can earn both by echoing the question. Press Train, let it run 4 steps and pause, then press "Measure rubric" on this run under Saved runs. Measured headless over 4 steps (32 answers in 8 groups) on seeds 1, 2 and 3: brief was met by every answer and flagged saturated on all three seeds (within-group variance 0: it never changed an advantage); finished and complete met exactly the same answers (Pearson r = 1.00 on all three: no answer ended with "!" or "?"), and the report lists them as redundant; on_topic was met by 22% to 53% of the answers. The rubric check found neither the saturation nor the redundancy: only rollouts show them. Then fix the rubric (remove brief and complete, reword on_topic so the prompt cannot meet it) and train again.',
  hide('reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations'),
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: QUALITY_RUBRIC,
    config: { ...BASE_CONFIG },
  },
);

// ---- 8. Evolution replaces a saturated criterion (issue 12's rubric lab) ----

/**
 * "brief" is met by every answer of 40 characters from the first step (the rubric-quality runs:
 * saturated on all three seeds), so it never moves an advantage. rubric_evolution "rare" with the
 * rule catalogue as its writer (no model: src/rubric/flawCatalogue.ts) replaces it after step 1
 * with the catalogue's most discriminative flaw check on steps 0–1, if that passes the guarded
 * check. The held-out rubric is the starting rubric, measured every step and never trained on:
 * one yardstick for the evolved run and the run without evolution.
 */
const EVOLUTION_RUBRIC = {
  name: 'One criterion saturates at once',
  criteria: [
    { id: 'brief', text: 'Uses at most 12 words', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'words', max: 12 } },
    { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
  ],
};

const EVOLUTION_EXPERIMENT = (evolution: Record<string, unknown>): Shared['experiment'] => ({
  model: DEFAULT_MODEL_ID,
  prompts: PROMPTS,
  rubric: EVOLUTION_RUBRIC,
  held_out_rubric: { ...EVOLUTION_RUBRIC, name: 'The starting rubric (held out: measured, never trained on)' },
  config: { ...BASE_CONFIG, rubric_evolution_every: 2, rubric_evolution_window: 2, rubric_evolution_writer: 'catalogue', ...evolution },
});

const EVOLUTION_EXPLANATION =
  'A criterion every answer meets is saturated: it adds the same amount to every reward of a group, so it never changes an advantage. RARE (rubric_evolution "rare") replaces such a criterion with a flaw check, a pitfall some answers have and others do not. Here the writer is the rule catalogue (rubric_evolution_writer "catalogue"): no model writes anything; the catalogue holds rule-based flaw checks (unfinished last sentence, letter stutter, runs of symbols, running longer than the recent answers\' median word count, repeating a word, ...), and the one with the largest within-group variance on the last rubric_evolution_window steps is proposed. Like a model\'s proposal, it is applied only if it passes the guarded check on those steps\' stored answers, and each change is a new rubric version with its parent and reason. The held-out chart measures the starting rubric on every step, never trained on.';

const RUBRIC_EVOLUTION = lesson(
  'rubric-evolution',
  8,
  'Evolution replaces a saturated criterion',
  '"brief" is met by every answer; after step 1 rubric evolution (rare, rule catalogue) swaps it for a flaw check that tells answers apart.',
  EVOLUTION_EXPLANATION,
  'Press Train. After the second step (step 1) the evolution log under the reward chart records the decision: which criterion was replaced, by which catalogue check, its within-group variance on steps 0–1 and the guarded check; the reward chart marks the new version. Open the rollout inspector on a later step: the flaw check is judged there, brief no longer. Measured headless over 6 steps on seeds 1, 2 and 3, against the variant without evolution: on every seed the catalogue replaced brief after step 1 with "runs long" (more than 8, 9 and 8 words: the median of steps 0–1), the guarded check accepted it, and the decisions after steps 3 and 5 changed nothing (no criterion was met by every answer). Groups whose answers all got the same reward, over steps 2–5: 0.13, 0 and 0 with evolution against 0.75, 0 and 0.25 without (fewer on seeds 1 and 3, the same on seed 2, where the new check was met by no answer in steps 2 and 3: a check no answer meets is as constant as one every answer meets, so those steps\' rewards were 2 × the rewards without evolution − 1 and their group-normalised advantages the same). The held-out chart, the starting rubric never trained on, ended the same: 0.63, 0.66 and 0.78 over steps 4–5 against 0.63, 0.66 and 0.75, so in 6 steps the replacement neither helped nor hurt what the starting rubric measures. The reward itself changes scale at the new version (a pitfall of weight −1 takes it below 0), so overlay the two runs on the held-out chart, not the reward chart.',
  hide('reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations'),
  EVOLUTION_EXPERIMENT({ rubric_evolution: 'rare' }),
  ['rubric-evolution-off'],
);

const RUBRIC_EVOLUTION_OFF = lesson(
  'rubric-evolution-off',
  8,
  'Evolution replaces a saturated criterion: off',
  'The same experiment with rubric_evolution off: "brief" stays, met by every answer.',
  EVOLUTION_EXPLANATION,
  'Train and compare with the evolving variant: here the rubric never changes, so brief, met by every answer, keeps adding the same amount to every reward. Overlay the two runs\' held-out charts (the reward charts have different scales after the evolving run\'s new version). Measured over 6 steps (seeds 1, 2, 3): brief was met by every answer of every step on all three seeds.',
  hide('reward_aggregation', 'scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations'),
  EVOLUTION_EXPERIMENT({ rubric_evolution: 'off' }),
  ['rubric-evolution'],
);

export const LESSONS: readonly Lesson[] = [
  BASICS,
  REWARD_HACKING,
  REWARD_HACKING_GATED,
  REWARD_HACKING_DROPOUT,
  HACKING_ONSET,
  VACUOUS_CREDIT,
  ZERO_VARIANCE,
  ZERO_VARIANCE_NONE,
  CLIPPING,
  CLIPPING_SYMMETRIC,
  TOKEN_CREDIT,
  UNEXPLORED,
  RUBRIC_QUALITY,
  RUBRIC_EVOLUTION,
  RUBRIC_EVOLUTION_OFF,
  DISTILL_TEACHER,
  DISTILL_SELF_RUBRIC,
  DISTILL_THEN_RL,
];

export function lessonById(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}
