import type { StepMetrics } from '../../src/rl/grpoStep';
export function keepStep(m: StepMetrics): Pick<StepMetrics, 'step' | 'rewards' | 'held_out' | 'frac_reward_zero_std' | 'entropy' | 'clip_ratio_low' | 'clip_ratio_high' | 'clip_ratio_region' | 'loss' | 'step_seconds' | 'distillation'> & { completions: { mean_length: StepMetrics['completions']['mean_length'] } };
