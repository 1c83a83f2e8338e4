// Page side of test/browser/trainer.test.ts: the GRPO loop's controls on the byte fixture.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { fetchModelFiles } from '../../../src/model/load';
import { buildGrpoContext } from '../../../src/rl/context';
import type { Stage, StepMetrics } from '../../../src/rl/grpoStep';
import { GrpoTrainer, type TrainerEvent } from '../../../src/rl/trainer';
import { rubricLineage } from '../../../src/rubric/evolve';
import { rubricEvolutionMarkers } from '../../../src/ui/lib/series';

const EXPERIMENT = {
  model: '/test/fixtures/tiny-byte-gpt2/',
  prompts: ['Name a color.', 'Say hello.', 'Name an animal.'],
  rubric: {
    name: 'vowels',
    criteria: [{ id: 'has_a', text: 'Contains the letter a', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['a'] } }],
  },
  config: { num_generations: 2, generation_batch_size: 4, max_completion_length: 4, learning_rate: 0.01, max_steps: 3, save_steps: 2 },
};

async function setup(rt: GpuRuntime, config: object = {}) {
  const experiment = { ...EXPERIMENT, config: { ...EXPERIMENT.config, ...config } };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(experiment.model));
  const events: TrainerEvent[] = [];
  const trainer = new GrpoTrainer(ctx, { prompts: experiment.prompts, onEvent: (e) => events.push(e) });
  return { ctx, trainer, events };
}

const summary = (events: TrainerEvent[]) =>
  events.filter((e) => e.type !== 'progress').map((e) => (e.type === 'status' ? `status:${e.status}` : e.type === 'stage' ? `stage:${e.stage}` : e.type === 'checkpoint' ? `checkpoint:${e.step}` : e.type === 'step' ? `step:${e.metrics.step}` : `error`));

/** Timed slow motion: each held stage goes on by itself after the delay, with no advance(). */
export async function timedSlowMotion(rt: GpuRuntime, input: { delayMs: number }) {
  const { ctx, trainer, events } = await setup(rt);
  const times: Record<string, number> = {};
  const seenAt = (stage: string) => events.findIndex((e) => e.type === 'stage' && e.stage === stage);
  trainer.setSlowMotion(true, input.delayMs);
  const done = trainer.singleStep();
  const poll = setInterval(() => {
    for (const stage of ['sampled', 'judged', 'advantages', 'updated']) if (times[stage] === undefined && seenAt(stage) >= 0) times[stage] = performance.now();
  }, 5);
  await done;
  clearInterval(poll);
  ctx.model.params.destroy();
  // Progress events between the stage events, a stage's consecutive ones as one entry.
  const flow = events
    .map((e) => (e.type === 'progress' ? `progress:${e.stage}` : e.type === 'stage' ? `stage:${e.stage}` : e.type === 'step' ? 'step' : null))
    .filter((x, i, all): x is string => x !== null && x !== all[i - 1]);
  const counts = events.flatMap((e) => (e.type === 'progress' ? [{ stage: e.stage, done: e.done, total: e.total, partial: e.partial?.length ?? null }] : []));
  return { step: trainer.step, times, events: summary(events), flow, counts };
}

/** Slow motion: the step waits at each stage until advance(); we advance after seeing each one. */
export async function slowMotion(rt: GpuRuntime) {
  const { ctx, trainer, events } = await setup(rt);
  trainer.slowMotion = true;
  const seen: Stage[] = [];
  const done = trainer.singleStep();
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve) => {
      const poll = () => {
        const stages = events.filter((e): e is Extract<TrainerEvent, { type: 'stage' }> => e.type === 'stage');
        if (stages.length > i) {
          seen.push(stages[i].stage);
          resolve();
        } else setTimeout(poll, 20);
      };
      poll();
    });
    if (trainer.step !== 0) throw new Error('the update ran before the last stage was released');
    trainer.advance();
  }
  await done;
  ctx.model.params.destroy();
  return { seen, step: trainer.step, status: trainer.status, events: summary(events) };
}

/** start() runs to max_steps with a checkpoint every save_steps; a second start() does nothing. */
export async function runToEnd(rt: GpuRuntime) {
  const { ctx, trainer, events } = await setup(rt);
  await trainer.start();
  const again = await trainer.start();
  // Stopping a finished run (e.g. when another run is opened) leaves it finished.
  await trainer.stop();
  ctx.model.params.destroy();
  return { step: trainer.step, status: trainer.status, events: summary(events), again: again ?? null };
}

/** pause() during a step finishes that step, checkpoints, then the loop pauses; resume() goes on. */
export async function pauseResume(rt: GpuRuntime) {
  const { ctx, trainer, events } = await setup(rt, { save_steps: 0 });
  const running = trainer.start();
  await new Promise<void>((resolve) => {
    const poll = () => (events.some((e) => e.type === 'stage') ? resolve() : setTimeout(poll, 10));
    poll();
  });
  trainer.pause();
  await running;
  const pausedAt = trainer.step;
  const statusAfterPause = trainer.status;
  await trainer.resume();
  ctx.model.params.destroy();
  return { pausedAt, statusAfterPause, final: trainer.step, status: trainer.status, events: summary(events) };
}

/**
 * rubric_evolution "prune" (issue 12): after step 0 the criterion every rollout meets ('always')
 * has zero within-group variance and is pruned; step 1 is judged with the new version. Returns
 * what each step was judged with, its decision, the chart's marker data and the checkpoint's rubric.
 */
export async function evolvePrune(rt: GpuRuntime) {
  const experiment = {
    ...EXPERIMENT,
    rubric: {
      name: 'evolving',
      criteria: [
        { id: 'always', text: 'At most 100000 characters', weight: 1, tier: 'important', rule: { kind: 'length', unit: 'characters', max: 100000 } },
        { id: 'ascii_start', text: 'Starts with a printable ASCII character', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '^[ -~]' } },
        { id: 'lower', text: 'Has no capital letters', weight: 1, tier: 'important', rule: { kind: 'no_caps' } },
      ],
    },
    config: { ...EXPERIMENT.config, num_generations: 2, generation_batch_size: 8, max_completion_length: 4, max_steps: 2, save_steps: 0, rubric_evolution: 'prune', rubric_evolution_every: 1, rubric_evolution_window: 1 },
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(experiment.model));
  const start = ctx.rubricVersion;
  const metrics: StepMetrics[] = [];
  const judgedCriteria: number[] = [];
  const trainer = new GrpoTrainer(ctx, {
    prompts: experiment.prompts,
    onEvent: (e) => {
      if (e.type === 'step') metrics.push(e.metrics);
      if (e.type === 'stage' && e.stage === 'judged') judgedCriteria.push(e.rollouts[0].scores.length);
    },
  });
  await trainer.start();
  const state = JSON.parse((await trainer.checkpoint())['trainer_state.json']);
  ctx.model.params.destroy();
  return {
    start,
    final: ctx.rubricVersion,
    finalIds: ctx.rubric.criteria.map((c) => c.id),
    status: trainer.status,
    judgedCriteria,
    steps: metrics.map((m) => ({
      step: m.step,
      rubric_version: m.rubric_version,
      passRateIds: Object.keys(m.rewards.criterion_pass_rate),
      evolution: m.rubric_evolution ? { ...m.rubric_evolution, rubric: m.rubric_evolution.rubric?.criteria.map((c) => c.id) ?? null } : null,
    })),
    markers: rubricEvolutionMarkers(metrics),
    checkpointVersion: state.evolved_rubric?.version ?? null,
  };
}

/**
 * rubric_evolution "rare" with a remote OpenAI-compatible writer (issue 12): 'always' is met by
 * every rollout, so after each step rare asks the endpoint (url: a loopback fake run by the test)
 * for flaw checks to replace it. The test's fake writes a malformed proposal first (a positive
 * weight) and a valid one second, and judges the new criterion's question on the snapshot. 'never'
 * (met by none) keeps a positive weight in the proposed rubric. Returns each step's decision and
 * the lineage.
 */
export async function evolveRareWriter(rt: GpuRuntime, input: { url: string }) {
  const experiment = {
    ...EXPERIMENT,
    rubric: {
      name: 'rare',
      criteria: [
        { id: 'always', text: 'At most 100000 characters', weight: 2, tier: 'important', rule: { kind: 'length', unit: 'characters', max: 100000 } },
        { id: 'never', text: 'Says zqxzqx', weight: 1, tier: 'important', rule: { kind: 'contains', terms: ['zqxzqx'] } },
      ],
    },
    // concurrency 1: the fake sees the guarded check's judge requests in rollout order.
    judge: { kind: 'remote', url: input.url, model: 'writer-model', concurrency: 1, max_attempts: 1 },
    config: { ...EXPERIMENT.config, num_generations: 2, generation_batch_size: 4, max_completion_length: 3, max_steps: 2, save_steps: 0, rubric_evolution: 'rare', rubric_evolution_every: 1, rubric_evolution_window: 1 },
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(experiment.model));
  const start = ctx.rubricVersion;
  const metrics: StepMetrics[] = [];
  const trainer = new GrpoTrainer(ctx, { prompts: experiment.prompts, onEvent: (e) => e.type === 'step' && metrics.push(e.metrics) });
  await trainer.start();
  ctx.model.params.destroy();
  return {
    start,
    status: trainer.status,
    final: ctx.rubricVersion,
    finalIds: ctx.rubric.criteria.map((c) => c.id),
    versions: metrics.map((m) => m.rubric_version),
    events: metrics.map((m) => (m.rubric_evolution ? { ...m.rubric_evolution, rubric: m.rubric_evolution.rubric?.criteria.map((c) => [c.id, c.weight]) ?? null } : null)),
    lineage: rubricLineage(start, metrics.map((m) => m.rubric_evolution)),
  };
}

/**
 * The black-box teacher (issue 11, ROPD) from a stored-responses file: the JSONL text goes through
 * the file parser into distillation.teacher_responses; the rubric writer and the judge are the
 * test's loopback OpenAI-compatible fake (url). One prompt per step (one group of two). After step
 * 0 the fake writes a valid criterion → a new version (provenance: the stored teacher, the base
 * version) that judges step 1; after step 1 (induce_every 1) it writes a malformed reply → a
 * recorded failure, the induced version stays. Returns each step's version, pass-rate ids and event.
 */
export async function blackBoxStored(rt: GpuRuntime, input: { url: string; responses: string }) {
  const { parseTeacherResponses } = await import('../../../src/rl/distill/teacherResponses');
  const experiment = {
    ...EXPERIMENT,
    judge: { kind: 'remote', url: input.url, model: 'writer-model', concurrency: 1, max_attempts: 1 },
    config: {
      ...EXPERIMENT.config,
      num_generations: 2,
      generation_batch_size: 2,
      max_completion_length: 3,
      max_steps: 2,
      save_steps: 0,
      distillation: { teacher: 'black_box', mode: 'mixed', teacher_responses: parseTeacherResponses(input.responses), induce_every: 1, induce_max_criteria: 2 },
    },
  };
  const ctx = await buildGrpoContext(rt, experiment, await fetchModelFiles(experiment.model));
  const start = ctx.rubricVersion;
  const metrics: StepMetrics[] = [];
  // Per step: the rubric version and ids at judging time, each rollout's scores in that order.
  const judged: { version: string; ids: string[]; scores: (number | null)[][] }[] = [];
  const trainer = new GrpoTrainer(ctx, {
    prompts: experiment.prompts,
    onEvent: (e) => {
      if (e.type === 'step') metrics.push(e.metrics);
      if (e.type === 'stage' && e.stage === 'judged') judged.push({ version: ctx.rubricVersion, ids: ctx.rubric.criteria.map((c) => c.id), scores: e.rollouts.map((r) => [...r.scores]) });
    },
  });
  await trainer.start();
  const state = JSON.parse((await trainer.checkpoint())['trainer_state.json']);
  ctx.model.params.destroy();
  return {
    start,
    status: trainer.status,
    final: ctx.rubricVersion,
    finalIds: ctx.rubric.criteria.map((c) => c.id),
    judged,
    steps: metrics.map((m) => ({
      step: m.step,
      passRates: m.rewards.criterion_pass_rate,
      rubricVersion: m.rubric_version ?? null,
      event: m.teacher_rubric ? { ...m.teacher_rubric, rubric: m.teacher_rubric.rubric?.criteria.map((c) => c.id) ?? null } : null,
    })),
    checkpointVersion: state.induced_rubric?.version ?? null,
  };
}
