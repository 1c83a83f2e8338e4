// The trainer's on_unscorable rule, with grpoStep faked (no GPU): a step whose fraction of
// rollouts without a reward is above max_unscorable_fraction is committed, then the run goes on
// ("warn") or fails with the count and the first reason ("stop").
import { describe, expect, it, vi } from 'vitest';
import { parseGrpoConfig, type GrpoConfigInput } from '../../../src/rl/config';
import type { GrpoContext, RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { judgeFailureMetrics } from '../../../src/rl/judgeFailures';

/** Rollouts without a reward, per step (the fake judge fails these). */
const failing = vi.hoisted(() => ({ perStep: [] as number[] }));

vi.mock('../../../src/model/checkpoint', () => ({ saveCheckpoint: async () => ({}) }));
vi.mock('../../../src/rl/grpoStep', () => ({
  grpoStep: async (ctx: GrpoContext, step: number) => {
    const n = ctx.config.generation_batch_size;
    const bad = failing.perStep[step] ?? 0;
    const rollouts = Array.from({ length: n }, (_, i) => ({
      step,
      group: Math.floor(i / ctx.config.num_generations),
      index: i % ctx.config.num_generations,
      results:
        i < bad
          ? [{ criterion_id: 'polite', status: 'unscorable', score: null, reason: 'HTTP 500 from the endpoint (gave up after 2 attempts)' }]
          : [{ criterion_id: 'polite', status: 'ok', score: 1, reason: 'yes' }],
      reward: i < bad ? null : 1,
    })) as unknown as RolloutRecord[];
    const metrics = { step, skipped: false, judge_failures: judgeFailureMetrics(rollouts, ctx.config.max_unscorable_fraction) } as unknown as StepMetrics;
    return { metrics, rollouts };
  },
}));

const { GrpoTrainer } = await import('../../../src/rl/trainer');

async function train(config: GrpoConfigInput, perStep: number[]) {
  failing.perStep = perStep;
  const ctx = { config: parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, max_steps: 3, save_steps: 0, ...config }) } as unknown as GrpoContext;
  const committed: number[] = [];
  const statuses: { status: string; message?: string }[] = [];
  const trainer = new GrpoTrainer(ctx, {
    prompts: ['a', 'b'],
    onEvent: (e) => {
      if (e.type === 'status') statuses.push({ status: e.status, message: e.message });
    },
    sink: { commitStep: async (step) => void committed.push(step) },
  });
  await trainer.start();
  return { trainer, committed, statuses };
}

describe('GrpoTrainer: on_unscorable', () => {
  it('"stop" fails the run after committing the step that passed the threshold, with the count and first reason', async () => {
    const { trainer, committed, statuses } = await train({ on_unscorable: 'stop', max_unscorable_fraction: 0.5 }, [2, 3, 4]);
    // Step 0: 2 of 4 is not above 0.5 → goes on; step 1: 3 of 4 → committed, then the run fails.
    expect(committed).toEqual([0, 1]);
    expect(trainer.status).toBe('failed');
    const last = statuses.at(-1)!;
    expect(last.status).toBe('failed');
    expect(last.message).toBe(
      '3 of 4 rollouts had no reward at step 1 (3 of 4 criterion verdicts failed): criterion "polite": HTTP 500 from the endpoint (gave up after 2 attempts). ' +
        'The run stopped: more than 50% of rollouts had no reward and on_unscorable is "stop".',
    );
  });

  it('"warn" (the default) trains on to the end with the failures in the metrics', async () => {
    const { trainer, committed, statuses } = await train({}, [4, 4, 4]);
    expect(committed).toEqual([0, 1, 2]);
    expect(trainer.status).toBe('finished');
    expect(statuses.at(-1)).toEqual({ status: 'finished', message: undefined });
  });

  it('"stop" with every reward scored never stops', async () => {
    const { trainer, committed } = await train({ on_unscorable: 'stop', max_unscorable_fraction: 0 }, [0, 0, 0]);
    expect(committed).toEqual([0, 1, 2]);
    expect(trainer.status).toBe('finished');
  });
});
