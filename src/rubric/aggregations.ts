// One entry point for the trainer: the configured aggregation for a group, or every
// aggregation side by side (for metrics: the trained reward next to the alternatives).
import {
  DEFAULT_GATE_CAP,
  DEFAULT_PASS_THRESHOLD,
  ROLLOUT_AGGREGATIONS,
  type BaseAggregation,
  type RolloutAggregation,
  type Scores,
} from './aggregate';
import { adaptiveWeights, DEFAULT_ADAPTIVE_FLOOR } from './adaptive';
import { correlationWeights } from './correlationWeights';
import { DEFAULT_FORK_BETA, forkReward, forkRubricIssue } from './fork';
import { irtRubricRewards, irtRubricUpdate, type IrtOnlineState } from './irtOnline';
import { rubricDropout } from './dropout';
import { HOLISTIC_ID, holisticReward } from './holistic';
import type { Rubric } from './schema';

export const AGGREGATIONS = [
  'weighted_mean',
  'healthbench_points',
  'essential_gated',
  'strict_all_required',
  'rubric_dropout',
  'adaptive_weights',
  // RaR's implicit aggregation: one holistic Likert judge over the whole rubric (holistic.ts).
  'holistic_likert',
  // RRD's correlation-aware weights (correlationWeights.ts) and FORK's precision + recall (fork.ts).
  'correlation_weights',
  'fork_precision_recall',
  // RRT's 2PL ability (irtOnline.ts): item parameters carried across steps by online EM.
  'irt_ability',
] as const;
export type AggregationName = (typeof AGGREGATIONS)[number];

/** The per-rollout aggregations, by name: the bases rubric_dropout can apply to the kept criteria. */
export const ROLLOUT_AGGREGATION_NAMES = ['weighted_mean', 'healthbench_points', 'essential_gated', 'strict_all_required'] as const satisfies readonly RolloutAggregation[];

/** Serializable aggregation settings (snake_case, like the rest of an experiment's options). */
export interface AggregationConfig {
  method: AggregationName;
  /** Met means score >= pass_threshold. Default 0.5. */
  pass_threshold?: number;
  /** essential_gated: the cap on a rollout failing an essential criterion. Default 0. */
  gate_cap?: number;
  gate_base?: BaseAggregation;
  /** rubric_dropout: drop probability per criterion, in [0, 1). Default 0.3. */
  dropout_p?: number;
  /** rubric_dropout: the aggregation of the kept criteria. Default weighted_mean. */
  dropout_aggregation?: RolloutAggregation;
  /** adaptive_weights: multiplier of a criterion that does not separate the group. Default 0.1. */
  adaptive_floor?: number;
  adaptive_tier_balance?: boolean;
  /** fork_precision_recall: β of the F_β of precision and recall (> 1 favours recall). Default 1. */
  fork_beta?: number;
  /** irt_ability: judge questions asked per completion, chosen by Fisher information (irtSelect.ts); absent/null = all. */
  irt_judge_budget?: number | null;
}

export const DEFAULT_DROPOUT_P = 0.3;

/** Where a group sits in training: Rubric Dropout draws its subset from it. */
export interface GroupContext {
  seed: number;
  step: number;
  group: string | number;
  /** irt_ability: the run's item table, this step's verdicts already folded in (the trainer keeps it across steps). */
  irt?: IrtOnlineState;
}

export interface GroupRewards {
  /** One per rollout; null = unscorable (advantage 0). */
  rewards: (number | null)[];
  /** rubric_dropout: the kept criteria. */
  keep?: boolean[];
  /** adaptive_weights, correlation_weights: the training weights used. */
  weights?: number[];
}

/**
 * The configured aggregation for one group of rollouts (scores aligned with rubric.criteria).
 * `history`: the verdicts seen so far (the trainer passes the step's whole batch), from which
 * correlation_weights estimates its correlations; absent = the group itself.
 */
export function aggregateGroup(
  rubric: Rubric,
  groupScores: readonly Scores[],
  config: AggregationConfig,
  context?: GroupContext,
  history?: readonly Scores[],
): GroupRewards {
  const options = {
    threshold: config.pass_threshold ?? DEFAULT_PASS_THRESHOLD,
    cap: config.gate_cap ?? DEFAULT_GATE_CAP,
    base: config.gate_base,
  };
  switch (config.method) {
    case 'rubric_dropout': {
      if (!context) throw new RangeError('rubric_dropout needs the group context (seed, step, group)');
      const out = rubricDropout(rubric, groupScores, {
        ...options,
        ...context,
        p: config.dropout_p ?? DEFAULT_DROPOUT_P,
        aggregation: config.dropout_aggregation,
      });
      return { rewards: out.rewards, keep: out.keep };
    }
    case 'adaptive_weights': {
      const out = adaptiveWeights(rubric, groupScores, {
        floor: config.adaptive_floor ?? DEFAULT_ADAPTIVE_FLOOR,
        tierBalance: config.adaptive_tier_balance,
      });
      return { rewards: out.rewards, weights: out.weights };
    }
    case 'holistic_likert':
      return { rewards: groupScores.map((s) => holisticReward(rubric, s)) };
    case 'correlation_weights': {
      const out = correlationWeights(rubric, groupScores, { history });
      return { rewards: out.rewards, weights: out.weights };
    }
    case 'fork_precision_recall':
      return { rewards: groupScores.map((s) => forkReward(rubric, s, config.fork_beta ?? DEFAULT_FORK_BETA)) };
    case 'irt_ability': {
      // The trainer passes its carried item table (context.irt); elsewhere (Try it, dynamic
      // sampling's pre-check, guided rows) the items are one update from the prior with the verdicts given.
      const state = context?.irt ?? irtRubricUpdate(rubric, null, history ?? groupScores, options.threshold);
      return { rewards: irtRubricRewards(rubric, state, groupScores, options.threshold) };
    }
    default: {
      if (!(config.method in ROLLOUT_AGGREGATIONS)) throw new RangeError(`unknown aggregation method "${String(config.method)}"`);
      const aggregate = ROLLOUT_AGGREGATIONS[config.method];
      return { rewards: groupScores.map((s) => aggregate(rubric, s, options)) };
    }
  }
}

/**
 * Every aggregation of one group side by side, with the config's settings. rubric_dropout is
 * included only with a context; the others always use the full rubric.
 */
export function aggregateAll(
  rubric: Rubric,
  groupScores: readonly Scores[],
  config: Omit<AggregationConfig, 'method'> = {},
  context?: GroupContext,
  history?: readonly Scores[],
): Partial<Record<AggregationName, (number | null)[]>> {
  const out: Partial<Record<AggregationName, (number | null)[]>> = {};
  for (const method of AGGREGATIONS) {
    if (method === 'rubric_dropout' && !context) continue;
    // Only where the holistic judge scored the rollouts (its criterion is in the rubric).
    if (method === 'holistic_likert' && !rubric.criteria.some((c) => c.id === HOLISTIC_ID)) continue;
    // Only where the rubric marks recall items (and has other criteria).
    if (method === 'fork_precision_recall' && forkRubricIssue(rubric) !== null) continue;
    // Stateful: its reward depends on the run's item table, which only the trainer has.
    if (method === 'irt_ability') continue;
    out[method] = aggregateGroup(rubric, groupScores, { ...config, method }, context, history).rewards;
  }
  return out;
}
