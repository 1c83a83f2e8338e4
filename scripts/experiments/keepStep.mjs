// What an experiment keeps of a step's metrics: the fields the lesson figures read, and a little
// more for the record. Shared by the lesson runner (lessons.mjs) and the distillation experiment's
// page side (scripts/page/distill.ts), so their lessons.json files merge.
export const keepStep = (m) => ({
  step: m.step,
  rewards: m.rewards,
  held_out: m.held_out,
  frac_reward_zero_std: m.frac_reward_zero_std,
  entropy: m.entropy,
  clip_ratio_low: m.clip_ratio_low,
  clip_ratio_high: m.clip_ratio_high,
  clip_ratio_region: m.clip_ratio_region,
  completions: { mean_length: m.completions.mean_length },
  loss: m.loss,
  step_seconds: m.step_seconds,
  distillation: m.distillation,
  // rubric_evolution: the version judged with and the decision after the step (its reason, checks and new rubric).
  rubric_version: m.rubric_version,
  rubric_evolution: m.rubric_evolution,
});
