// Page side of test/browser/learning.test.ts: does GRPO raise the rubric reward of the
// embedded model? Evaluate (fixed seed, many samples) → train → evaluate again.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { generate } from '../../../src/model/generate';
import { fetchModelFiles, modelUrl } from '../../../src/model/load';
import { buildGrpoContext } from '../../../src/rl/context';
import type { GrpoContext } from '../../../src/rl/grpoStep';
import { GrpoTrainer } from '../../../src/rl/trainer';
import { aggregateGroup, judgeRollouts, scoresOf } from '../../../src/rubric';

export interface LearningRequest {
  experiment: { model: string; prompts: string[]; rubric: unknown; config: Record<string, unknown> };
  steps: number;
  evalSamplesPerPrompt: number;
  evalSeed: number;
}

/** Mean and variance of the rubric reward over samples of every prompt (weighted mean). */
async function evaluate(ctx: GrpoContext, prompts: string[], perPrompt: number, seed: number) {
  const ids = prompts.flatMap((p) => Array.from({ length: perPrompt }, () => ctx.formatPrompt(p)));
  const gen = await generate(ctx.model, ids, { max_completion_length: ctx.config.max_completion_length, temperature: ctx.config.temperature, top_k: 0, top_p: 1, seed }, { eosTokenId: ctx.tokenizer.eosTokenId });
  const rollouts = gen.completions.map((c, i) => ({ prompt: prompts[Math.floor(i / perPrompt)], completion: ctx.tokenizer.decode(c) }));
  const results = await judgeRollouts(ctx.rubric, ctx.rubricVersion, rollouts);
  const rewards = results.map((r) => aggregateGroup(ctx.rubric, [scoresOf(ctx.rubric, r)], { method: 'weighted_mean' }).rewards[0] ?? 0);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const variance = rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / (rewards.length - 1);
  return { mean, variance, n: rewards.length, samples: rollouts.slice(0, 6).map((r) => r.completion) };
}

export async function learn(rt: GpuRuntime, req: LearningRequest) {
  const t0 = performance.now();
  const ctx = await buildGrpoContext(rt, req.experiment, await fetchModelFiles(modelUrl(req.experiment.model)));
  const t1 = performance.now();
  const before = await evaluate(ctx, req.experiment.prompts, req.evalSamplesPerPrompt, req.evalSeed);
  const t2 = performance.now();
  const rewards: (number | null)[] = [];
  const stepSeconds: number[] = [];
  const trainer = new GrpoTrainer(ctx, { prompts: req.experiment.prompts, onEvent: (e) => e.type === 'step' && rewards.push(e.metrics.rewards.reward) });
  for (let i = 0; i < req.steps; i++) {
    const s = performance.now();
    await trainer.singleStep();
    stepSeconds.push((performance.now() - s) / 1000);
  }
  const t3 = performance.now();
  const after = await evaluate(ctx, req.experiment.prompts, req.evalSamplesPerPrompt, req.evalSeed);
  const t4 = performance.now();
  ctx.model.params.destroy();
  // Seconds per phase, printed by the test so a slow suite shows where the time went (never asserted).
  const seconds = { load: (t1 - t0) / 1000, evalBefore: (t2 - t1) / 1000, steps: stepSeconds, evalAfter: (t4 - t3) / 1000 };
  return { before, after, trainRewards: rewards, status: trainer.status, seconds };
}
