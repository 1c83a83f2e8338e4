// irt_ability across a resume, with grpoStep and the weights faked (no GPU): the trainer's
// checkpoint carries the item table in trainer_state.json, and the resumed context's table
// (resumedIrtState, what buildGrpoContext puts on the context) is the one the run had.
import { describe, expect, it, vi } from 'vitest';
import type { CheckpointFiles } from '../../../src/model/checkpoint';
import { parseGrpoConfig } from '../../../src/rl/config';
import type { GrpoContext, RolloutRecord, StepMetrics } from '../../../src/rl/grpoStep';
import { irtRubricUpdate } from '../../../src/rubric/irtOnline';
import { weighted } from '../rubric/fixtures';

// saveCheckpoint as the real one writes trainer_state.json (its weights need a GPU).
vi.mock('../../../src/model/checkpoint', async (original) => ({
  ...(await original<typeof import('../../../src/model/checkpoint')>()),
  saveCheckpoint: async (_model: unknown, state: Record<string, unknown>) => ({ 'config.json': '{}', 'model.safetensors': new ArrayBuffer(8), 'trainer_state.json': JSON.stringify({ format: 'rubric-playground-checkpoint-1', ...state }, null, 2) }),
}));
// Each fake step folds a batch of verdicts into the table, as grpoStep does for irt_ability.
vi.mock('../../../src/rl/grpoStep', () => ({
  grpoStep: async (ctx: GrpoContext, step: number) => {
    const scores = [[1, 0], [step % 2, 1], [0, 0], [1, 1]];
    ctx.irt = irtRubricUpdate(ctx.rubric, ctx.irt, scores);
    return { metrics: { step, skipped: false } as unknown as StepMetrics, rollouts: [] as RolloutRecord[] };
  },
}));

const { GrpoTrainer } = await import('../../../src/rl/trainer');
const { resumedIrtState } = await import('../../../src/rl/irtResume');

const rubric = weighted([
  [1, 'important'],
  [1, 'important'],
]);
const config = parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, max_steps: 3, save_steps: 0, reward_aggregation: { method: 'irt_ability' } });

function context(): GrpoContext {
  return { config, rubric, rubricVersion: 'v1', irt: null, reference: null, model: { params: { totalSize: 1, size: 1 } } } as unknown as GrpoContext;
}

describe('irt_ability resume', () => {
  it("the trainer's checkpoint carries the table and a resumed context gets it back identical", async () => {
    const ctx = context();
    const trainer = new GrpoTrainer(ctx, { prompts: ['a', 'b'] });
    await trainer.singleStep();
    await trainer.singleStep();
    expect(ctx.irt?.steps).toBe(2);
    const files = (await trainer.checkpoint()) as CheckpointFiles;
    expect(JSON.parse(files['trainer_state.json']).irt_state).toMatchObject({ version: 1, rubric_version: 'v1', criteria: 2, steps: 2 });
    const restored = resumedIrtState(config, rubric.criteria.length, 'v1', files);
    expect(restored.note).toBeNull();
    expect(restored.state).toEqual(ctx.irt);
    // The resumed run's next step gives the same table as the uninterrupted one.
    const resumed = { ...context(), irt: restored.state };
    await new GrpoTrainer(resumed, { prompts: ['a', 'b'], startStep: 2 }).singleStep();
    await trainer.singleStep();
    expect(resumed.irt).toEqual(ctx.irt);
    expect(resumed.irt?.steps).toBe(3);
  });

  it('no table in a checkpoint after step 0 is a fresh table with a note; other methods and fresh runs expect none', () => {
    const files = (step: number, extra = {}): CheckpointFiles => ({ 'config.json': '{}', 'model.safetensors': new ArrayBuffer(0), 'trainer_state.json': JSON.stringify({ global_step: step, seed: 0, ...extra }) });
    const missing = resumedIrtState(config, 2, 'v1', files(4));
    expect(missing.state).toBeNull();
    expect(missing.note).toMatch(/no IRT item table.*fresh item table/);
    expect(resumedIrtState(config, 2, 'v1', files(0))).toEqual({ state: null, note: null });
    expect(resumedIrtState(config, 2, 'v1', undefined)).toEqual({ state: null, note: null });
    expect(resumedIrtState(parseGrpoConfig({}), 2, 'v1', files(4))).toEqual({ state: null, note: null });
    const bad = resumedIrtState(config, 2, 'v1', files(4, { irt_state: { version: 9 } }));
    expect(bad.state).toBeNull();
    expect(bad.note).toMatch(/not valid/);
  });

  it('a run with no table (another method, or before its first step) saves no irt_state', async () => {
    const ctx = { ...context(), config: parseGrpoConfig({ num_generations: 2, generation_batch_size: 4, max_steps: 3, save_steps: 0 }) };
    const files = (await new GrpoTrainer(ctx, { prompts: ['a'] }).checkpoint()) as CheckpointFiles;
    expect(JSON.parse(files['trainer_state.json'])).not.toHaveProperty('irt_state');
  });
});
