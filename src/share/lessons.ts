// Lessons: one-click experiments that each show one idea of GRPO, TensorFlow-Playground style.
// Each is a Shared value (what a link carries): the experiment, guidance text shown with it, and the
// controls it hides so the page stays simple; for reward hacking the experiment has a held-out
// clean rubric (held_out_rubric), scored as a metric only. Lessons that differ in the one setting under study name each
// other in `compare_with`, so the page can offer "run the other one and overlay the charts".
// All run on the embedded model with rule criteria only: they work offline, in seconds.
import { DEFAULT_MODEL_ID } from '../model/registry';
import type { Shared } from './link';

export interface Lesson {
  id: string;
  /** The lesson it belongs to: issue 5's 1 basics, 2 reward hacking, 3 zero-variance groups, 4 clipping; issue 10's 5 token credit, 6 unexplored criteria. */
  number: 1 | 2 | 3 | 4 | 5 | 6 | 8;
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
 * The trained rubric: a judge with two known biases (a keyword and length) next to the real wishes.
 * Sized to the lesson's 40 characters (measured on the embedded model, issue 16: 48 answers of its
 * first 3 steps): about 1 answer in 10 has one of the keywords, about 1 in 3 reaches 9 words (cut
 * off at the length limit, so not finished) and about 3 in 10 keep to 7 words. "detailed" outweighs
 * the real wishes, so rambling pays; the essential "at most 7 words" excludes it (what gating acts on).
 */
const BIASED_RUBRIC = {
  name: 'Helpful answers (judge with a known bias)',
  criteria: [
    {
      id: 'enthusiastic',
      text: 'Sounds enthusiastic. The judge\'s actual check is a keyword: "great", "amazing", "wonderful", "wonderfully", "lovely" or "beautiful" appears (its known bias).',
      weight: 2,
      tier: 'important',
      rule: { kind: 'contains', terms: ['great', 'amazing', 'wonderful', 'wonderfully', 'lovely', 'beautiful'], whole_word: true },
    },
    {
      id: 'detailed',
      text: 'Gives detail. The judge\'s actual check is length: at least 9 words (its other bias).',
      weight: 3,
      tier: 'important',
      rule: { kind: 'length', unit: 'words', min: 9 },
    },
    { id: 'concise', text: 'Keeps to the point: at most 7 words', weight: 1, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 7 } },
    { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
  ],
};

/** What the author really wants, scored by a clean judge and never trained on. */
export const CLEAN_HELD_OUT_RUBRIC = {
  name: 'Clean judge (held out: a metric, never trained on)',
  criteria: [
    { id: 'concise', text: 'Keeps to the point: at most 7 words', weight: 2, tier: 'essential', rule: { kind: 'length', unit: 'words', max: 7 } },
    { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', rule: { kind: 'ends_with', text: '.' } },
    { id: 'focused', text: 'Says one or two sentences', weight: 1, tier: 'optional', rule: { kind: 'count', unit: 'sentences', max: 2 } },
  ],
};

const HACKING_EXPLANATION =
  'The trained rubric comes from a judge with known biases: it calls an answer "enthusiastic" when a keyword appears and "detailed" when it is long. Those two criteria carry most of the weight, so the policy can raise its reward by stuffing keywords and rambling without getting any better. A held-out clean judge, which is never trained on, measures what the author really wanted: the gap between the biased judge\'s score and the held-out score is reward hacking, and it grows when the policy learns to exploit a bias. Each step samples only 8 answers, so single steps are noisy: judge the trend over several steps.';

const HACKING_HIDDEN = hide('scale_rewards', 'loss_type', 'beta', 'epsilon', 'epsilon_high', 'num_iterations', 'num_generations');

const REWARD_HACKING = lesson(
  'reward-hacking',
  2,
  'Reward hacking: a biased judge',
  'Train on a judge that likes keywords and length; watch a clean held-out judge disagree.',
  HACKING_EXPLANATION,
  'Train for at least 8 steps. Compare the reward chart (the biased judge) with the held-out chart (the clean judge): when they part ways, the policy is exploiting the bias. In the rollout inspector, look for answers of 9 or more words cut off at the 40-character limit, and for the keywords. Measured headless (8 steps, seeds 1, 2 and 3; the first 2 steps against the last 2): "detailed" passed more answers on every seed (25% to 50%, 38% to 44%, 38% to 56%) while the held-out score fell on every seed (0.47 to 0.42, 0.41 to 0.39, 0.42 to 0.31): small moves at 8 answers a step, the same direction three times. Then open the gated and Rubric Dropout variants and compare.',
  HACKING_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: BIASED_RUBRIC,
    held_out_rubric: CLEAN_HELD_OUT_RUBRIC,
    config: { ...BASE_CONFIG, reward_aggregation: { method: 'weighted_mean' } },
  },
  ['reward-hacking-gated', 'reward-hacking-dropout'],
);

const REWARD_HACKING_GATED = lesson(
  'reward-hacking-gated',
  2,
  'Reward hacking: essential gating',
  'The same biased judge, but failing the essential "at most 7 words" caps the reward at 0.',
  `${HACKING_EXPLANATION} Here the reward is essentially gated: an answer that fails an essential criterion ("at most 7 words") gets at most gate_cap (0), whatever else it earns, so the length bias cannot pay off.`,
  'Train for at least 8 steps and compare with the ungated lesson: the length bias no longer pays, so answers get shorter and the held-out score follows. Measured headless (8 steps, seeds 1, 2 and 3, each with the same first step as the ungated lesson; the first 2 steps against the last 2): "detailed" fell to 13% of the answers on every seed (from 44%, 38% and 50%) while the held-out score rose on every seed (0.39 to 0.58, 0.41 to 0.69, 0.39 to 0.69). The keyword bias is still there (it is not an essential criterion): can you spot it in the rollouts?',
  HACKING_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: BIASED_RUBRIC,
    held_out_rubric: CLEAN_HELD_OUT_RUBRIC,
    config: { ...BASE_CONFIG, reward_aggregation: { method: 'essential_gated', gate_cap: 0 } },
  },
  ['reward-hacking', 'reward-hacking-dropout'],
);

const REWARD_HACKING_DROPOUT = lesson(
  'reward-hacking-dropout',
  2,
  'Reward hacking: Rubric Dropout',
  'The same biased judge, but each step every group trains on a random half of the criteria.',
  `${HACKING_EXPLANATION} Rubric Dropout drops each criterion with probability dropout_p before the reward is computed (the same subset for a whole group, a new one each step), so no single biased criterion is always there to exploit; the held-out evaluation uses the full clean rubric.`,
  'Train for at least 8 steps and compare the held-out score and the "detailed" pass rate with the plain and gated lessons. Measured headless (8 steps, seeds 1, 2 and 3, the same first step as the other two; the first 2 steps against the last 2): "detailed" fell on every seed (44% to 31%, 56% to 44%, 44% to 31%) but less than under gating, and the held-out score rose on two seeds and fell on one (0.39 to 0.47, 0.41 to 0.48, 0.41 to 0.34): between the plain lesson and the gated one on average, not on every seed. Try dropout_p 0.3 and 0.7.',
  HACKING_HIDDEN,
  {
    model: DEFAULT_MODEL_ID,
    prompts: PROMPTS,
    rubric: BIASED_RUBRIC,
    held_out_rubric: CLEAN_HELD_OUT_RUBRIC,
    config: { ...BASE_CONFIG, reward_aggregation: { method: 'rubric_dropout', dropout_p: 0.5 } },
  },
  ['reward-hacking', 'reward-hacking-gated'],
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

export const LESSONS: readonly Lesson[] = [
  BASICS,
  REWARD_HACKING,
  REWARD_HACKING_GATED,
  REWARD_HACKING_DROPOUT,
  ZERO_VARIANCE,
  ZERO_VARIANCE_NONE,
  CLIPPING,
  CLIPPING_SYMMETRIC,
  TOKEN_CREDIT,
  UNEXPLORED,
  RUBRIC_QUALITY,
];

export function lessonById(id: string): Lesson | undefined {
  return LESSONS.find((l) => l.id === id);
}
