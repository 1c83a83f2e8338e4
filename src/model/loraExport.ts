// LoRA adapters in and out, in PEFT's format: adapter_model.safetensors with names like
// base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight ([r, in]) and .lora_B.weight
// ([out, r]), plus adapter_config.json; PeftModel.from_pretrained loads them as they are. GPT-2's
// c_attn is one PEFT module (fan_in_fan_out = true): its lora_B joins the engine's q/k/v blocks.
// The merged model is base + scale·B·A written as a plain Hugging Face model.safetensors.
import { recordMatmul } from '../ops/matmul';
import { configToHf } from './config';
import { LoraAdapters, projectionWeight, resolveLoraConfig, type LoraConfig } from './lora';
import type { LoraSite } from './loraSites';
import { readSafetensors, writeSafetensors, type Tensor } from './safetensors';
import type { Transformer } from './transformer';
import { parameterSpecs, toHfTensors } from './weights';

export interface AdapterFiles {
  'adapter_model.safetensors': ArrayBuffer;
  'adapter_config.json': string;
}

export interface MergedModelFiles {
  'config.json': string;
  'model.safetensors': ArrayBuffer;
}

const PREFIX = 'base_model.model.';

/** PEFT's tensor names of a site. */
export function peftNames(site: LoraSite): { a: string; b: string } {
  return { a: `${PREFIX}${site.module}.lora_A.weight`, b: `${PREFIX}${site.module}.lora_B.weight` };
}

function requireLora(model: Transformer): LoraAdapters {
  if (!model.lora) throw new Error('the model has no LoRA adapters (full fine-tuning): export the model itself');
  return model.lora;
}

/** The adapter_config.json PEFT writes for this adapter. */
export function adapterConfig(model: Transformer, baseModel: string | null): Record<string, unknown> {
  const c = requireLora(model).config;
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    revision: null,
    r: c.r,
    lora_alpha: c.lora_alpha,
    lora_dropout: c.lora_dropout,
    target_modules: c.target_modules,
    use_rslora: c.use_rslora,
    fan_in_fan_out: model.config.architecture === 'gpt2',
    bias: 'none',
    modules_to_save: null,
    init_lora_weights: true,
    layers_to_transform: null,
    layers_pattern: null,
    rank_pattern: {},
    alpha_pattern: {},
    use_dora: false,
    inference_mode: true,
  };
}

/** The trained adapter as PEFT files. `baseModel` names the base (a Hub id) in adapter_config.json. */
export async function adapterFiles(model: Transformer, options: { baseModel?: string } = {}): Promise<AdapterFiles> {
  const lora = requireLora(model);
  const values = await model.params.read('value', lora.specs.map((s) => s.name));
  const tensors = new Map<string, Tensor>();
  for (const site of lora.sites) {
    const names = peftNames(site);
    tensors.set(names.a, values.get(site.a)!);
    tensors.set(names.b, joinRows(site.outputs.map((o) => values.get(o.b)!)));
  }
  return {
    'adapter_model.safetensors': writeSafetensors(tensors, { metadata: { format: 'pt' } }),
    'adapter_config.json': JSON.stringify(adapterConfig(model, options.baseModel ?? null), null, 2),
  };
}

function joinRows(parts: Tensor[]): Tensor {
  if (parts.length === 1) return parts[0];
  const cols = parts[0].shape[1];
  const rows = parts.reduce((s, p) => s + p.shape[0], 0);
  const data = new Float32Array(rows * cols);
  let at = 0;
  for (const p of parts) {
    data.set(p.data, at);
    at += p.data.length;
  }
  return { shape: [rows, cols], data };
}

type Json = Record<string, unknown>;

/** adapter_config.json → the engine's LoRA options; settings the engine cannot honour are named. */
export function parseAdapterConfig(text: string): Partial<LoraConfig> {
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`adapter_config.json is not valid JSON (${(err as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('adapter_config.json must hold a JSON object');
  if (json.peft_type !== 'LORA') throw new Error(`adapter_config.json: peft_type ${JSON.stringify(json.peft_type)} is not supported (only "LORA")`);
  const unsupported: [string, boolean][] = [
    ['use_dora', json.use_dora === true],
    ['bias', json.bias != null && json.bias !== 'none'],
    ['modules_to_save', Array.isArray(json.modules_to_save) && json.modules_to_save.length > 0],
    ['layers_to_transform', json.layers_to_transform != null],
    ['rank_pattern', isNonEmptyObject(json.rank_pattern)],
    ['alpha_pattern', isNonEmptyObject(json.alpha_pattern)],
  ];
  for (const [field, bad] of unsupported) {
    if (bad) throw new Error(`adapter_config.json: ${field} = ${JSON.stringify(json[field])} is not supported by this engine`);
  }
  const targets = json.target_modules;
  if (typeof targets === 'string' && targets !== 'all-linear') {
    throw new Error(`adapter_config.json: target_modules as a regular expression (${JSON.stringify(targets)}) is not supported; give a list of module names`);
  }
  const out: Partial<LoraConfig> = {};
  if (json.r !== undefined) out.r = json.r as number;
  if (json.lora_alpha !== undefined) out.lora_alpha = json.lora_alpha as number;
  if (json.lora_dropout !== undefined) out.lora_dropout = json.lora_dropout as number;
  if (targets != null) out.target_modules = targets as string[] | 'all-linear';
  if (json.use_rslora !== undefined) out.use_rslora = json.use_rslora as boolean;
  return out;
}

function isNonEmptyObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).length > 0;
}

/**
 * Loads PEFT adapter files into the model: attaches adapters with the file's config when it
 * has none (freezing the base), or checks that the attached ones have the same shape, then
 * sets every A and B. Missing, misshapen or unexpected tensors are named.
 */
export async function loadLoraAdapter(model: Transformer, files: AdapterFiles): Promise<LoraAdapters> {
  const options = parseAdapterConfig(files['adapter_config.json']);
  const tensors = readSafetensors(files['adapter_model.safetensors'], 'adapter_model.safetensors').tensors;
  const wanted = resolveLoraConfig(options, model.config);
  if (model.lora) {
    const c = model.lora.config;
    const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((t) => y.includes(t));
    for (const [field, mine, theirs] of [
      ['r', c.r, wanted.r],
      ['lora_alpha', c.lora_alpha, wanted.lora_alpha],
      ['use_rslora', c.use_rslora, wanted.use_rslora],
    ] as const) {
      if (mine !== theirs) throw new Error(`adapter_config.json: ${field} = ${theirs}, the model's adapters have ${field} = ${mine}`);
    }
    if (!same(c.target_modules, wanted.target_modules)) {
      throw new Error(`adapter_config.json: target_modules ${wanted.target_modules.join(', ')} differ from the model's adapters (${c.target_modules.join(', ')})`);
    }
  }
  // Check every tensor before attaching anything, so a bad file leaves the model as it was.
  const lora = model.lora ?? new LoraAdapters(model.config, options);
  const c = lora.config;
  const values = new Map<string, Float32Array>();
  const expected = new Set<string>();
  for (const site of lora.sites) {
    const names = peftNames(site);
    expected.add(names.a).add(names.b);
    const a = tensor(tensors, names.a, [c.r, site.inDim]);
    const outRows = site.outputs.reduce((s, o) => s + o.outDim, 0);
    const b = tensor(tensors, names.b, [outRows, c.r]);
    values.set(site.a, a.data);
    let at = 0;
    for (const o of site.outputs) {
      values.set(o.b, b.data.slice(at * c.r, (at + o.outDim) * c.r));
      at += o.outDim;
    }
  }
  const extra = [...tensors.keys()].filter((n) => !expected.has(n));
  if (extra.length) {
    throw new Error(`adapter_model.safetensors: ${extra.length} tensor(s) the model's adapters do not have, e.g. ${extra.slice(0, 3).join(', ')} (targets: ${c.target_modules.join(', ')})`);
  }
  const attached = model.lora ?? model.attachLora(options, 0);
  for (const [name, data] of values) model.params.writeValue(name, data);
  return attached;
}

function tensor(tensors: Map<string, Tensor>, name: string, shape: number[]): Tensor {
  // PEFT writes names without the adapter name; some tools keep ".default".
  const t = tensors.get(name) ?? tensors.get(name.replace(/\.weight$/, '.default.weight'));
  if (!t) throw new Error(`adapter_model.safetensors: missing tensor ${name} (shape ${JSON.stringify(shape)})`);
  if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
    throw new Error(`adapter_model.safetensors: ${name} has shape ${JSON.stringify(t.shape)}, the adapter config implies ${JSON.stringify(shape)}`);
  }
  return t;
}

/**
 * The merged model: every adapted weight becomes W + scale·B·A (in the weight's own layout:
 * Conv1D [in, out] takes the transpose), computed on the GPU in one submission, and the whole
 * model is written with Hugging Face names. It loads as a plain model, no adapters.
 */
export async function mergedModelFiles(model: Transformer): Promise<MergedModelFiles> {
  const lora = requireLora(model);
  const { rt, config, names, params } = model;
  const { r, scale } = lora.config;
  const values = await params.read('value', parameterSpecs(config).map((s) => s.name));
  const rec = rt.recorder('lora merge');
  const buffers: GPUBuffer[] = [];
  const merged: { name: string; read: Promise<Float32Array> }[] = [];
  try {
    for (const site of lora.sites) {
      const a = params.get(site.a).value;
      for (const o of site.outputs) {
        const name = projectionWeight(names, site.layer, o.role);
        const w = params.get(name);
        const out = rt.storage(w.count * 4, 'lora.merged');
        buffers.push(out);
        rec.copy(w.value.buffer, out, w.count * 4, w.value.offset);
        const b = params.get(o.b).value;
        if (names.layout === 'out_in') {
          recordMatmul(rt, rec, { a: b, b: a, c: out }, { m: o.outDim, n: site.inDim, k: r, alpha: scale, beta: 1 });
        } else {
          recordMatmul(rt, rec, { a, b, c: out }, { m: site.inDim, n: o.outDim, k: r, transA: true, transB: true, alpha: scale, beta: 1 });
        }
        merged.push({ name, read: rec.readF32(out, w.count) });
      }
    }
    await rec.submit();
    for (const m of merged) values.set(m.name, { shape: values.get(m.name)!.shape, data: await m.read });
  } finally {
    rt.release(...buffers);
  }
  return {
    'config.json': JSON.stringify(configToHf(config), null, 2),
    'model.safetensors': writeSafetensors(toHfTensors(config, values), { metadata: { format: 'pt' } }),
  };
}
