// Page side of test/browser/refSync.test.ts: TRL's sync_ref_model on the byte fixture. The
// trainer mixes the policy into the KL reference after the steps that are multiples of
// ref_model_sync_steps; checkpoints then carry the reference and resuming restores it.
import type { GpuRuntime } from '../../../src/gpu/runtime';
import type { CheckpointFiles } from '../../../src/model/checkpoint';
import { fetchModelFiles } from '../../../src/model/load';
import type { Transformer } from '../../../src/model/transformer';
import { buildGrpoContext, releaseGrpoContext } from '../../../src/rl/context';
import { GrpoTrainer } from '../../../src/rl/trainer';

const EXPERIMENT = {
  model: '/test/fixtures/tiny-byte-gpt2/',
  prompts: ['Name a color.', 'Say hello.', 'Name an animal.'],
  rubric: {
    name: 'vowels',
    // About a third of random bytes are printable ASCII: groups disagree, so the policy moves.
    criteria: [{ id: 'ascii', text: 'Starts with a printable ASCII character', weight: 1, tier: 'important', rule: { kind: 'regex', pattern: '^[ -~]' } }],
  },
  config: {
    num_generations: 2,
    generation_batch_size: 4,
    max_completion_length: 4,
    learning_rate: 0.01,
    max_steps: 3,
    save_steps: 0,
    beta: 0.04,
    sync_ref_model: true,
    ref_model_sync_steps: 2,
    ref_model_mixup_alpha: 0.6,
  },
};

async function values(model: Transformer): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [name, t] of await model.params.read('value')) out[name] = Array.from(t.data);
  return out;
}

/** Largest |ref - (α policy + (1 - α) before)| and largest |ref - before| over every tensor. */
function compare(ref: Record<string, number[]>, policy: Record<string, number[]>, before: Record<string, number[]>, alpha: number) {
  let mixError = 0;
  let moved = 0;
  for (const name of Object.keys(ref)) {
    ref[name].forEach((r, i) => {
      mixError = Math.max(mixError, Math.abs(r - (alpha * policy[name][i] + (1 - alpha) * before[name][i])));
      moved = Math.max(moved, Math.abs(r - before[name][i]));
    });
  }
  return { mixError, moved };
}

export async function syncAndResume(rt: GpuRuntime) {
  const t0 = performance.now();
  const files = await fetchModelFiles(EXPERIMENT.model);
  const ctx = await buildGrpoContext(rt, EXPERIMENT, files);
  const trainer = new GrpoTrainer(ctx, { prompts: EXPERIMENT.prompts });
  const start = await values(ctx.reference!);
  await trainer.singleStep();
  const afterStep1 = compare(await values(ctx.reference!), await values(ctx.model), start, 0.6);
  const checkpoint1 = await trainer.checkpoint();
  await trainer.singleStep();
  const policy2 = await values(ctx.model);
  const ref2 = await values(ctx.reference!);
  const afterStep2 = compare(ref2, policy2, start, 0.6);
  const policyMoved = compare(policy2, policy2, start, 1).moved;
  const checkpoint2 = await trainer.checkpoint();
  releaseGrpoContext(ctx);
  const trained = performance.now();

  // Resuming from the step-2 checkpoint restores the mixed reference, bit for bit.
  const resumed = await buildGrpoContext(rt, EXPERIMENT, files, { resume: checkpoint2 });
  const restored = compare(await values(resumed.reference!), ref2, ref2, 0).moved;
  releaseGrpoContext(resumed);
  // Without it, resuming would silently use the starting reference: refused.
  const stripped: CheckpointFiles = { ...checkpoint2 };
  delete stripped['ref_model.safetensors'];
  let missing = '';
  try {
    releaseGrpoContext(await buildGrpoContext(rt, EXPERIMENT, files, { resume: stripped }));
  } catch (err) {
    missing = (err as Error).message;
  }
  return {
    afterStep1,
    afterStep2,
    seconds: { training: (trained - t0) / 1000, resuming: (performance.now() - trained) / 1000 },
    policyMoved,
    restored,
    missing,
    checkpoint1HasRef: checkpoint1['ref_model.safetensors'] !== undefined,
    checkpoint2HasRef: checkpoint2['ref_model.safetensors'] !== undefined,
  };
}
