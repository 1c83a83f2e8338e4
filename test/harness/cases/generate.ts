// Page side of test/browser/generate.test.ts: KV-cache sampling against greedy decoding done
// the slow way (a full forward pass over each whole sequence, no cache, no padding).
import type { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf } from '../../../src/model/config';
import { generate, type GenerationConfig } from '../../../src/model/generate';
import { ParameterStore } from '../../../src/model/parameters';
import { readSafetensors } from '../../../src/model/safetensors';
import { Transformer } from '../../../src/model/transformer';
import { fromHfTensors } from '../../../src/model/weights';

async function loadGolden(rt: GpuRuntime, name: string): Promise<Transformer> {
  const dir = `/test/golden/${name}`;
  const config = configFromHf(await (await fetch(`${dir}/config.json`)).json());
  const weights = readSafetensors(await (await fetch(`${dir}/model.safetensors`)).arrayBuffer());
  return new Transformer(rt, config, ParameterStore.create(rt, config, fromHfTensors(config, weights.tensors)));
}

async function greedyByFullForward(rt: GpuRuntime, model: Transformer, prompt: number[], steps: number): Promise<number[]> {
  const seq = [...prompt];
  const V = model.config.vocabSize;
  for (let s = 0; s < steps; s++) {
    const rec = rt.recorder('full forward');
    const state = model.forward(rec, { batch: 1, seqLen: seq.length, ids: Uint32Array.from(seq), pads: [0] });
    const logits = rec.readF32(state.logits, V, (seq.length - 1) * V);
    await rec.submit();
    const row = await logits;
    model.release(state);
    let best = 0;
    for (let i = 1; i < V; i++) if (row[i] > row[best]) best = i;
    seq.push(best);
  }
  return seq.slice(prompt.length);
}

export async function greedyParity(rt: GpuRuntime, input: { model: string; prompts: number[][]; steps: number }) {
  const model = await loadGolden(rt, input.model);
  const cfg: GenerationConfig = { max_completion_length: input.steps, temperature: 0, top_k: 0, top_p: 1, seed: 0 };
  const out = await generate(model, input.prompts, cfg, { eosTokenId: -1, stepsPerSubmit: 3 });
  const reference = [];
  for (const p of input.prompts) reference.push(await greedyByFullForward(rt, model, p, input.steps));
  model.params.destroy();
  return { completions: out.completions, reference, truncated: out.truncated, submits: out.submits };
}

export async function seeded(rt: GpuRuntime, input: { model: string; prompts: number[][]; cfg: GenerationConfig; eos: number }) {
  const model = await loadGolden(rt, input.model);
  const a = await generate(model, input.prompts, input.cfg, { eosTokenId: input.eos });
  const b = await generate(model, input.prompts, input.cfg, { eosTokenId: input.eos, stepsPerSubmit: 5 });
  const c = await generate(model, input.prompts, { ...input.cfg, seed: input.cfg.seed + 1 }, { eosTokenId: input.eos });
  model.params.destroy();
  return { a, b, c };
}
