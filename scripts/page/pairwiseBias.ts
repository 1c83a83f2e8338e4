// In-page side of scripts/experiments/pairwiseBias.mjs (issue 13): one GRPO step of the embedded
// model with the pairwise judge (judge_verdict "pairwise", judge self: the frozen starting policy
// reads two of a group's answers in one prompt and the margin of "A" vs "B" picks the winner), and
// the judge meta panel's position bias (src/rubric/judgeMeta.ts) over the step's groups: the
// model's own first-slot win rate and index, every pair asked in both orders.
import type { GpuRuntime } from '../../src/gpu/runtime';
import { DEFAULT_MODEL_ID } from '../../src/model/registry';
import { fetchModelFiles, modelUrl } from '../../src/model/load';
import { buildGrpoContext, releaseGrpoContext } from '../../src/rl/context';
import { grpoStep } from '../../src/rl/grpoStep';
import { positionBias } from '../../src/rubric/judgeMeta';
import { pairwiseComparisons, type PairwiseResult } from '../../src/rubric/pairwise';

/** The first lesson's prompts (src/share/lessons.ts PROMPTS): short requests the embedded model answers. */
const PROMPTS = ['Describe the sea.', 'Tell me about the moon.', 'Give a tip about cooking.', 'Explain how birds fly.', 'Write one sentence about music.', 'Describe a city at night.', 'Say something about rain.', 'Tell me about trees.'];

/** Two of the lessons' criteria asked as judge questions (the lessons check them with rules). */
const CRITERIA = [
  { id: 'vivid', text: 'Uses a concrete describing word (a colour, size, temperature or sound)', weight: 1, tier: 'important', judge_question: 'Does it use a describing word?' },
  { id: 'finished', text: 'Ends with a full stop', weight: 1, tier: 'important', judge_question: 'Does it end with a full stop?' },
];

export async function measure(rt: GpuRuntime, input: { seed: number; groups: number; numGenerations: number; maxCompletionLength: number }) {
  const prompts = PROMPTS.slice(0, input.groups);
  const experiment = {
    model: DEFAULT_MODEL_ID,
    prompts,
    rubric: { name: 'pairwise-bias', criteria: CRITERIA },
    judge: { kind: 'self' },
    config: {
      num_generations: input.numGenerations,
      generation_batch_size: input.numGenerations * prompts.length,
      max_completion_length: input.maxCompletionLength,
      temperature: 1,
      learning_rate: 3e-4,
      beta: 0,
      loss_type: 'dapo',
      seed: input.seed,
      judge_verdict: 'pairwise',
    },
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(modelUrl(experiment.model)));
  try {
    const t0 = performance.now();
    const step = await grpoStep(ctx, 0, prompts);
    const seconds = (performance.now() - t0) / 1000;
    const byGroup = new Map<number, typeof step.rollouts>();
    for (const r of step.rollouts) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
    const groups = [...byGroup.entries()].map(([g, rs]) => ({ group: `0/${g}`, step: 0, results: [...rs].sort((a, b) => a.index - b.index).map((r) => r.results) }));
    const ids = CRITERIA.map((c) => c.id);
    const results = step.rollouts.flatMap((r) => r.results as PairwiseResult[]).filter((r) => ids.includes(r.criterion_id));
    const margins = results.flatMap((r) => (r.pairwise ?? []).map((p) => p.margin));
    return {
      seed: input.seed,
      prompts,
      judge: ctx.modelJudge?.name ?? null,
      seconds,
      judge_seconds: step.metrics.judge_seconds,
      position_bias: positionBias(pairwiseComparisons(ids, groups, null, { seed: input.seed })),
      unscorable: results.filter((r) => r.status !== 'ok').map((r) => r.reason).slice(0, 3),
      unscorable_count: results.filter((r) => r.status !== 'ok').length,
      margins: { n: margins.length, mean: margins.reduce((s, m) => s + m, 0) / Math.max(1, margins.length), mean_abs: margins.reduce((s, m) => s + Math.abs(m), 0) / Math.max(1, margins.length) },
      example: step.rollouts[0] && { completion: step.rollouts[0].completion, results: step.rollouts[0].results },
    };
  } finally {
    releaseGrpoContext(ctx);
  }
}
