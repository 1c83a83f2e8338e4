import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../../src/model/config';
import { readSafetensors } from '../../../src/model/safetensors';
import { fromHfTensors, parameterSpecs, toHfTensors } from '../../../src/model/weights';

function load(model: string) {
  const dir = new URL(`../../golden/${model}/`, import.meta.url);
  const config = configFromHf(JSON.parse(readFileSync(new URL('config.json', dir), 'utf8')));
  const bytes = readFileSync(new URL('model.safetensors', dir));
  return { config, tensors: readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).tensors };
}

describe('Hugging Face weights <-> engine tensors', () => {
  it('splits GPT-2 c_attn into q/k/v and joins it back bit for bit', () => {
    const { config, tensors } = load('gpt2-tiny');
    const internal = fromHfTensors(config, tensors);
    const D = config.hiddenSize;
    const q = internal.get('transformer.h.1.attn.q.weight')!;
    const k = internal.get('transformer.h.1.attn.k.weight')!;
    const cAttn = tensors.get('transformer.h.1.attn.c_attn.weight')!;
    expect(q.shape).toEqual([D, D]);
    expect(q.data[2 * D + 5]).toBe(cAttn.data[2 * 3 * D + 5]);
    expect(k.data[3 * D + 7]).toBe(cAttn.data[3 * 3 * D + D + 7]);
    const back = toHfTensors(config, internal);
    expect([...back.keys()].sort()).toEqual([...tensors.keys()].sort());
    for (const [name, t] of tensors) expect(Array.from(back.get(name)!.data), name).toEqual(Array.from(t.data));
  });

  it('lists every Llama tensor with its shape, untied head included', () => {
    const { config, tensors } = load('llama-tiny');
    const specs = parameterSpecs(config);
    expect(specs.map((s) => s.name).sort()).toEqual([...tensors.keys()].sort());
    for (const s of specs) expect(tensors.get(s.name)!.shape, s.name).toEqual(s.shape);
  });

  it('names a missing or misshapen tensor', () => {
    const { config, tensors } = load('llama-tiny');
    const missing = new Map(tensors);
    missing.delete('model.layers.1.mlp.up_proj.weight');
    expect(() => fromHfTensors(config, missing)).toThrow(/missing tensor model\.layers\.1\.mlp\.up_proj\.weight/);
    const wrong = new Map(tensors);
    wrong.set('model.norm.weight', { shape: [3], data: new Float32Array(3) });
    expect(() => fromHfTensors(config, wrong)).toThrow(/model\.norm\.weight has shape \[3\], config\.json implies \[32\]/);
  });
});
