// Fresh weights for a new model, as Hugging Face initialises GPT-2 / Llama: normal(0, 0.02)
// for matrices and embeddings, zeros for biases, ones for norm weights. Seeded.
import type { ModelConfig } from './config';
import type { Tensor } from './safetensors';
import { parameterSpecs } from './weights';

/** mulberry32: a small seeded 32-bit generator, uniform in [0, 1) (also the LoRA initialiser's). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function initialWeights(config: ModelConfig, seed: number, std = 0.02): Map<string, Tensor> {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const out = new Map<string, Tensor>();
  for (const spec of parameterSpecs(config)) {
    const count = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    const isNorm = /(ln_\d|ln_f|layernorm|norm)\.weight$/.test(spec.name);
    if (isNorm) data.fill(1);
    else if (spec.shape.length > 1) for (let i = 0; i < count; i++) data[i] = std * normal();
    out.set(spec.name, { shape: spec.shape, data });
  }
  return out;
}
