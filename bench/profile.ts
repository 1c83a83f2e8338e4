// In-page side of bench/profile.mjs: the GPU time of every kernel of a training step and of
// sampling (GpuRuntime.profileKernels: a pass per dispatch with timestamp queries), after an
// unprofiled warm-up of the same shapes, so compilation and first-use setup are left out.
import type { GpuRuntime } from '../src/gpu/runtime';
import { kernelTotals, type KernelTotal } from '../src/gpu/kernelProfiler';
import { configFromHf } from '../src/model/config';
import { generate } from '../src/model/generate';
import { initialWeights } from '../src/model/init';
import { ParameterStore } from '../src/model/parameters';
import { SftTrainer } from '../src/model/sft';
import { Transformer } from '../src/model/transformer';
import { run as grpoRun, type GrpoBenchRequest } from './grpoStep';

export interface ProfileRequest {
  hfConfig: Record<string, unknown>;
  train: { batch: number; seqLen: number };
  sample: { batch: number; promptLen: number; newTokens: number };
  /**
   * Also time unprofiled train steps with dispatch pairing off and on (src/gpu/dispatchPair.ts),
   * alternating, this many rounds each (after a warm-up of both).
   */
  pairingRounds?: number;
  /** Also a GRPO step (bench/grpoStep.ts: its own model of hfConfig's shape, sampling + judge + update). */
  grpo?: Omit<GrpoBenchRequest, 'hfConfig' | 'steps'>;
}

export interface PhaseProfile {
  what: string;
  wallSeconds: number;
  gpuMs: number;
  dispatches: number;
  kernels: KernelTotal[];
}

async function phase(rt: GpuRuntime, what: string, run: () => Promise<unknown>): Promise<PhaseProfile> {
  await run(); // warm-up: pipelines, buffers, bind groups
  const t0 = performance.now();
  const { timings } = await rt.profileKernels(run);
  return {
    what,
    wallSeconds: (performance.now() - t0) / 1000,
    gpuMs: timings.reduce((s, t) => s + t.ms, 0),
    dispatches: timings.length,
    kernels: kernelTotals(timings),
  };
}

export async function run(rt: GpuRuntime, req: ProfileRequest) {
  const config = configFromHf(req.hfConfig);
  const model = new Transformer(rt, config, ParameterStore.create(rt, config, initialWeights(config, 1)));
  try {
    const { batch, seqLen } = req.train;
    const V = Math.min(config.vocabSize, 256);
    const examples = Array.from({ length: batch }, (_, b) => ({
      prompt: [(b * 7) % V],
      completion: Array.from({ length: seqLen - 1 }, (_, i) => (b * 31 + i * 13) % V),
    }));
    const trainer = new SftTrainer(rt, model, config.eosTokenId ?? 0, { learning_rate: 1e-4, lr_scheduler_type: 'constant' });
    const train = await phase(rt, `train step ${batch}x${seqLen}`, () => trainer.trainStep(examples));
    const pairing = req.pairingRounds ? await pairingWall(rt, req.pairingRounds, () => trainer.trainStep(examples)) : null;
    const s = req.sample;
    const prompts = Array.from({ length: s.batch }, (_, b) => Array.from({ length: s.promptLen }, (_, i) => (b * 17 + i * 5) % V));
    const sample = await phase(rt, `sampling ${s.batch} x ${s.newTokens} new tokens (prompts of ${s.promptLen})`, () =>
      generate(model, prompts, { max_completion_length: s.newTokens, temperature: 1, top_k: 0, top_p: 1, seed: 1 }, { eosTokenId: -1 }),
    );
    const phases = [train, sample];
    if (req.grpo) {
      const g = req.grpo;
      const gen = (g.config.generation_batch_size ?? g.config.num_generations) as number;
      phases.push(await phase(rt, `GRPO step: ${gen} completions of up to ${g.config.max_completion_length} tokens`, () => grpoRun(rt, { ...g, hfConfig: req.hfConfig, steps: 1 })));
    }
    return { adapter: rt.info, phases, pairing };
  } finally {
    model.params.destroy();
  }
}

/** Wall seconds of `step` with pairing off and on, alternating (which goes first alternates too); medians and every round. */
async function pairingWall(rt: GpuRuntime, rounds: number, step: () => Promise<unknown>) {
  const was = rt.pairDispatches;
  const time = async (on: boolean) => {
    rt.pairDispatches = on;
    const t0 = performance.now();
    await step();
    return (performance.now() - t0) / 1000;
  };
  try {
    await time(false);
    await time(true);
    const off: number[] = [];
    const on: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const first of r % 2 === 0 ? [false, true] : [true, false]) (first ? on : off).push(await time(first));
    }
    const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    return { rounds, offMedian: median(off), onMedian: median(on), off, on };
  } finally {
    rt.pairDispatches = was;
  }
}
