// LoRA configuration, sites and initialisation (pure): PEFT names and matching, TRL defaults,
// clear errors, GPT-2's fused c_attn kept as one module, and seeded kaiming-uniform A / zero B.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configFromHf, type ModelConfig } from '../../src/model/config';
import { LoraAdapters, loraConfigFromTrl, resolveLoraConfig } from '../../src/model/lora';
import { initialLoraTensors, kaimingUniformBound } from '../../src/model/loraInit';
import { parseAdapterConfig } from '../../src/model/loraExport';
import { modelNames } from '../../src/model/weights';

function config(model: string): ModelConfig {
  return configFromHf(JSON.parse(readFileSync(new URL(`../golden/${model}/config.json`, import.meta.url), 'utf8')));
}
const gpt2 = config('gpt2-tiny');
const llama = config('llama-tiny');

describe('LoRA config', () => {
  it('fills TRL defaults and PEFT default targets per architecture', () => {
    const g = resolveLoraConfig({}, gpt2);
    expect([g.r, g.lora_alpha, g.lora_dropout, g.use_rslora, g.scale]).toEqual([16, 32, 0.05, false, 2]);
    expect(g.target_modules).toEqual(['c_attn']);
    expect(resolveLoraConfig({}, llama).target_modules).toEqual(['q_proj', 'v_proj']);
  });

  it('scales alpha / r, or alpha / sqrt(r) with use_rslora', () => {
    expect(resolveLoraConfig({ r: 4, lora_alpha: 6 }, llama).scale).toBe(1.5);
    expect(resolveLoraConfig({ r: 4, lora_alpha: 8, use_rslora: true }, llama).scale).toBe(4);
  });

  it('expands all-linear to every linear module of the blocks', () => {
    expect(resolveLoraConfig({ target_modules: 'all-linear' }, gpt2).target_modules).toEqual(['c_attn', 'c_proj', 'c_fc']);
    expect(resolveLoraConfig({ target_modules: 'all-linear' }, llama).target_modules).toHaveLength(7);
  });

  it('names bad fields', () => {
    expect(() => resolveLoraConfig({ r: 0 }, llama)).toThrow(/r must be an integer >= 1, got 0/);
    expect(() => resolveLoraConfig({ r: 2.5 }, llama)).toThrow(/r must be an integer >= 1/);
    expect(() => resolveLoraConfig({ lora_alpha: -1 }, llama)).toThrow(/lora_alpha must be a finite number > 0/);
    expect(() => resolveLoraConfig({ lora_dropout: 1 }, llama)).toThrow(/lora_dropout must be in \[0, 1\)/);
    expect(() => resolveLoraConfig({ target_modules: [] }, llama)).toThrow(/non-empty list/);
    expect(() => resolveLoraConfig({ lora_r: 8 } as never, llama)).toThrow(/unknown field "lora_r".*"r" here/);
  });

  it('lists the valid module names when a target matches nothing', () => {
    expect(() => resolveLoraConfig({ target_modules: ['q_proj', 'c_attn'] }, llama)).toThrow(
      /"c_attn" match no layer of this model \(valid for llama: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, or "all-linear"\)/,
    );
    expect(() => resolveLoraConfig({ target_modules: ['q'] }, gpt2)).toThrow(/"q" match no layer.*c_attn, c_proj, c_fc, attn.c_proj, mlp.c_proj/);
  });

  it('maps TRL ModelConfig names', () => {
    expect(loraConfigFromTrl({ lora_r: 8, lora_alpha: 16, lora_dropout: 0, lora_target_modules: null, use_rslora: true })).toEqual({
      r: 8,
      lora_alpha: 16,
      lora_dropout: 0,
      use_rslora: true,
    });
  });
});

describe('LoRA sites', () => {
  it('keeps GPT-2 c_attn as one module with one A feeding q, k and v', () => {
    const lora = new LoraAdapters(gpt2, { r: 4, target_modules: ['c_attn'] });
    expect(lora.sites).toHaveLength(gpt2.numLayers);
    const s = lora.sites[1];
    expect(s.module).toBe('transformer.h.1.attn.c_attn');
    expect(s.outputs.map((o) => o.role)).toEqual(['q', 'k', 'v']);
    expect(lora.specs.slice(0, 4)).toEqual([
      { name: 'transformer.h.0.attn.c_attn.lora_A.weight', shape: [4, 32] },
      { name: 'transformer.h.0.attn.c_attn.lora_B.q.weight', shape: [32, 4] },
      { name: 'transformer.h.0.attn.c_attn.lora_B.k.weight', shape: [32, 4] },
      { name: 'transformer.h.0.attn.c_attn.lora_B.v.weight', shape: [32, 4] },
    ]);
    expect(lora.siteFor(1, 'k')).toBe(s);
    expect(lora.siteFor(1, 'o')).toBeNull();
  });

  it('matches c_proj in both blocks as PEFT does, and attn.c_proj in one', () => {
    const both = new LoraAdapters(gpt2, { target_modules: ['c_proj'] });
    expect(both.sites.map((s) => s.module)).toEqual(['transformer.h.0.attn.c_proj', 'transformer.h.0.mlp.c_proj', 'transformer.h.1.attn.c_proj', 'transformer.h.1.mlp.c_proj']);
    expect(both.sites.map((s) => [s.input, s.inDim])).toEqual([['attention_output', 32], ['mlp_hidden', 80], ['attention_output', 32], ['mlp_hidden', 80]]);
    const attn = new LoraAdapters(gpt2, { target_modules: ['attn.c_proj'] });
    expect(attn.sites.map((s) => s.module)).toEqual(['transformer.h.0.attn.c_proj', 'transformer.h.1.attn.c_proj']);
  });

  it('gives Llama projections their GQA shapes and names the adapted base weights', () => {
    const lora = new LoraAdapters(llama, { r: 2, target_modules: 'all-linear' });
    const layer0 = lora.sites.filter((s) => s.layer === 0);
    expect(layer0.map((s) => [s.module.split('.').pop(), s.inDim, s.outputs[0].outDim])).toEqual([
      ['q_proj', 32, 32],
      ['k_proj', 32, 16],
      ['v_proj', 32, 16],
      ['o_proj', 32, 32],
      ['gate_proj', 32, 48],
      ['up_proj', 32, 48],
      ['down_proj', 48, 32],
    ]);
    const adapted = lora.adaptedWeights(modelNames(llama));
    expect(adapted.has('model.layers.1.mlp.gate_proj.weight')).toBe(true);
    expect(adapted.has('lm_head.weight')).toBe(false);
    expect(adapted.size).toBe(14);
  });
});

describe('LoRA initialisation', () => {
  it('draws A from U(-1/sqrt(in), 1/sqrt(in)) reproducibly and sets B to zero', () => {
    const lora = new LoraAdapters(llama, { r: 8, target_modules: ['down_proj'] });
    const t1 = initialLoraTensors(lora.sites, 8, 7);
    const t2 = initialLoraTensors(lora.sites, 8, 7);
    const t3 = initialLoraTensors(lora.sites, 8, 8);
    const a = t1.get('model.layers.0.mlp.down_proj.lora_A.weight')!;
    expect(a.shape).toEqual([8, 48]);
    const bound = kaimingUniformBound(48);
    expect(bound).toBeCloseTo(1 / Math.sqrt(48), 12);
    expect(Math.max(...a.data.map(Math.abs))).toBeLessThanOrEqual(bound);
    expect(Math.max(...a.data.map(Math.abs))).toBeGreaterThan(0.9 * bound);
    const mean = a.data.reduce((s, v) => s + v, 0) / a.data.length;
    expect(Math.abs(mean)).toBeLessThan(0.15 * bound);
    expect(Array.from(t2.get('model.layers.0.mlp.down_proj.lora_A.weight')!.data)).toEqual(Array.from(a.data));
    expect(Array.from(t3.get('model.layers.0.mlp.down_proj.lora_A.weight')!.data)).not.toEqual(Array.from(a.data));
    // Layers draw from different streams.
    expect(Array.from(t1.get('model.layers.1.mlp.down_proj.lora_A.weight')!.data)).not.toEqual(Array.from(a.data));
    expect(t1.get('model.layers.0.mlp.down_proj.lora_B.weight')!.data.every((v) => v === 0)).toBe(true);
  });
});

describe('adapter_config.json', () => {
  it('reads PEFT fields and refuses what the engine cannot honour', () => {
    const base = { peft_type: 'LORA', r: 8, lora_alpha: 16, lora_dropout: 0.1, target_modules: ['q_proj'], use_rslora: false, bias: 'none' };
    expect(parseAdapterConfig(JSON.stringify(base))).toEqual({ r: 8, lora_alpha: 16, lora_dropout: 0.1, target_modules: ['q_proj'], use_rslora: false });
    expect(() => parseAdapterConfig(JSON.stringify({ ...base, use_dora: true }))).toThrow(/use_dora = true is not supported/);
    expect(() => parseAdapterConfig(JSON.stringify({ ...base, peft_type: 'IA3' }))).toThrow(/peft_type "IA3" is not supported/);
    expect(() => parseAdapterConfig(JSON.stringify({ ...base, target_modules: '.*proj' }))).toThrow(/regular expression/);
    expect(() => parseAdapterConfig(JSON.stringify({ ...base, bias: 'all' }))).toThrow(/bias = "all" is not supported/);
    expect(() => parseAdapterConfig('{oops')).toThrow(/not valid JSON/);
  });
});
