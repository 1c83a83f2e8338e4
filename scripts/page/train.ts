// In-page side of scripts/train.mjs: runs an experiment with the same trainer the app uses.
import type { GpuRuntime } from '../../src/gpu/runtime';
import { fetchModelFiles, modelUrl } from '../../src/model/load';
import { buildGrpoContext, releaseGrpoContext } from '../../src/rl/context';
import { parseExperiment } from '../../src/rl/experiment';
import type { RolloutRecord, StepMetrics } from '../../src/rl/grpoStep';
import { GrpoTrainer } from '../../src/rl/trainer';
import { runFileJson } from '../../src/share/runFile';

export interface TrainRequest {
  experiment: unknown;
  /** Stop after this many steps (default: the experiment's max_steps). */
  steps?: number;
  /** The remote judge's API key (scripts/train.mjs reads it from RUBRIC_JUDGE_API_KEY). */
  judgeApiKey?: string;
  /** Also return every step's completion texts (scripts/experiments/lessons.mjs reads what the model writes). */
  keepCompletions?: boolean;
  /** Also return the whole run (every step's rollouts) as a run file's JSON text, named so (a lesson's recording). */
  recordAs?: string;
}

export async function runExperiment(rt: GpuRuntime, request: TrainRequest) {
  const { experiment } = parseExperiment(request.experiment);
  const files = await fetchModelFiles(modelUrl(experiment.model));
  const ctx = await buildGrpoContext(rt, experiment, files, { judgeApiKey: request.judgeApiKey });
  const metrics: StepMetrics[] = [];
  let lastRollouts: RolloutRecord[] = [];
  const completions: string[][] = [];
  const allRollouts: RolloutRecord[] = [];
  const errors: string[] = [];
  const trainer = new GrpoTrainer(ctx, {
    prompts: experiment.prompts,
    onEvent: (e) => {
      if (e.type === 'step') {
        metrics.push(e.metrics);
        lastRollouts = e.rollouts;
        if (request.recordAs !== undefined) allRollouts.push(...e.rollouts);
        if (request.keepCompletions) completions.push(e.rollouts.map((r) => r.completion));
      } else if (e.type === 'error') errors.push(e.message);
    },
  });
  const steps = request.steps ?? ctx.config.max_steps;
  for (let i = 0; i < steps && trainer.status !== 'failed' && trainer.status !== 'finished'; i++) await trainer.singleStep();
  releaseGrpoContext(ctx);
  const runFile = request.recordAs === undefined ? undefined : await runFileJson({ name: request.recordAs, experiment, metrics, rollouts: allRollouts });
  return {
    status: trainer.status,
    steps: trainer.step,
    metrics,
    rollouts: lastRollouts,
    errors,
    ...(request.keepCompletions ? { completions } : {}),
    ...(runFile !== undefined ? { runFile } : {}),
  };
}
