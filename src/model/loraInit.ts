// PEFT's default LoRA initialisation, seeded: A ~ kaiming_uniform(a = sqrt(5)) over its fan-in
// (so U(-1/sqrt(in), 1/sqrt(in))) and B = 0, so a fresh adapter leaves the model unchanged.
import type { Tensor } from './safetensors';
import { mulberry32 } from './init';
import type { LoraSite } from './loraSites';

/** kaiming_uniform_(w, a=sqrt(5)) bound for fan-in `fanIn`: gain·sqrt(3/fanIn), gain = sqrt(2/(1+a²)). */
export function kaimingUniformBound(fanIn: number): number {
  const gain = Math.sqrt(2 / (1 + 5));
  return gain * Math.sqrt(3 / fanIn);
}

export function initialLoraTensors(sites: readonly LoraSite[], r: number, seed: number): Map<string, Tensor> {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`LoRA seed must be a 32-bit unsigned integer, got ${seed}`);
  const out = new Map<string, Tensor>();
  for (const site of sites) {
    const rand = mulberry32((seed ^ Math.imul(site.index + 1, 0x9e3779b1)) >>> 0);
    const bound = kaimingUniformBound(site.inDim);
    const a = new Float32Array(r * site.inDim);
    for (let i = 0; i < a.length; i++) a[i] = (2 * rand() - 1) * bound;
    out.set(site.a, { shape: [r, site.inDim], data: a });
    for (const o of site.outputs) out.set(o.b, { shape: [o.outDim, r], data: new Float32Array(o.outDim * r) });
  }
  return out;
}
