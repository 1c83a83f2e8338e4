// Names and layouts of a model's parameters. The engine keeps Hugging Face names and layouts
// (GPT-2 Conv1D weights are [in, out]; Llama Linear weights are [out, in]), with one change:
// GPT-2's fused c_attn [D, 3D] is split into separate q/k/v projections on load, so each
// projection is a plain matmul into its own tensor (a range of the parameters' arena), and joined again on save.
import type { ModelConfig } from './config';
import type { Tensor } from './safetensors';

/** How a 2-D weight multiplies its input: y = x W ('in_out', Conv1D) or y = x Wᵀ ('out_in', Linear). */
export type WeightLayout = 'in_out' | 'out_in';

export interface ParameterSpec {
  name: string;
  shape: number[];
}

const gpt2Layer = (i: number) => `transformer.h.${i}.`;
const llamaLayer = (i: number) => `model.layers.${i}.`;

/** Internal names of one layer's tensors, by role. */
export interface LayerNames {
  norm1: string;
  norm1Bias: string | null;
  q: string;
  k: string;
  v: string;
  qBias: string | null;
  kBias: string | null;
  vBias: string | null;
  qNorm: string | null;
  kNorm: string | null;
  o: string;
  oBias: string | null;
  norm2: string;
  norm2Bias: string | null;
  /** GPT-2: c_fc; Llama: up_proj. */
  up: string;
  upBias: string | null;
  /** Llama only. */
  gate: string | null;
  /** GPT-2: mlp.c_proj; Llama: down_proj. */
  down: string;
  downBias: string | null;
}

export interface ModelNames {
  tokens: string;
  positions: string | null;
  layers: LayerNames[];
  finalNorm: string;
  finalNormBias: string | null;
  /** The LM head weight [V, D]: the token table when tied. */
  head: string;
  layout: WeightLayout;
}

export function modelNames(c: ModelConfig): ModelNames {
  const layers: LayerNames[] = [];
  if (c.architecture === 'gpt2') {
    for (let i = 0; i < c.numLayers; i++) {
      const p = gpt2Layer(i);
      layers.push({
        norm1: `${p}ln_1.weight`,
        norm1Bias: `${p}ln_1.bias`,
        q: `${p}attn.q.weight`,
        k: `${p}attn.k.weight`,
        v: `${p}attn.v.weight`,
        qBias: `${p}attn.q.bias`,
        kBias: `${p}attn.k.bias`,
        vBias: `${p}attn.v.bias`,
        qNorm: null,
        kNorm: null,
        o: `${p}attn.c_proj.weight`,
        oBias: `${p}attn.c_proj.bias`,
        norm2: `${p}ln_2.weight`,
        norm2Bias: `${p}ln_2.bias`,
        up: `${p}mlp.c_fc.weight`,
        upBias: `${p}mlp.c_fc.bias`,
        gate: null,
        down: `${p}mlp.c_proj.weight`,
        downBias: `${p}mlp.c_proj.bias`,
      });
    }
    return {
      tokens: 'transformer.wte.weight',
      positions: 'transformer.wpe.weight',
      layers,
      finalNorm: 'transformer.ln_f.weight',
      finalNormBias: 'transformer.ln_f.bias',
      head: 'transformer.wte.weight',
      layout: 'in_out',
    };
  }
  for (let i = 0; i < c.numLayers; i++) {
    const p = llamaLayer(i);
    const bias = (proj: string) => (c.attentionBias ? `${p}self_attn.${proj}.bias` : null);
    layers.push({
      norm1: `${p}input_layernorm.weight`,
      norm1Bias: null,
      q: `${p}self_attn.q_proj.weight`,
      k: `${p}self_attn.k_proj.weight`,
      v: `${p}self_attn.v_proj.weight`,
      qBias: bias('q_proj'),
      kBias: bias('k_proj'),
      vBias: bias('v_proj'),
      qNorm: c.qkNorm ? `${p}self_attn.q_norm.weight` : null,
      kNorm: c.qkNorm ? `${p}self_attn.k_norm.weight` : null,
      o: `${p}self_attn.o_proj.weight`,
      oBias: null,
      norm2: `${p}post_attention_layernorm.weight`,
      norm2Bias: null,
      up: `${p}mlp.up_proj.weight`,
      upBias: null,
      gate: `${p}mlp.gate_proj.weight`,
      down: `${p}mlp.down_proj.weight`,
      downBias: null,
    });
  }
  return {
    tokens: 'model.embed_tokens.weight',
    positions: null,
    layers,
    finalNorm: 'model.norm.weight',
    finalNormBias: null,
    head: c.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight',
    layout: 'out_in',
  };
}

/** Every trainable tensor of the model with its internal shape, in a fixed order. */
export function parameterSpecs(c: ModelConfig): ParameterSpec[] {
  const n = modelNames(c);
  const D = c.hiddenSize;
  const F = c.intermediateSize;
  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  const w = (rowsIn: number, colsOut: number) => (n.layout === 'in_out' ? [rowsIn, colsOut] : [colsOut, rowsIn]);
  const specs: ParameterSpec[] = [{ name: n.tokens, shape: [c.vocabSize, D] }];
  if (n.positions) specs.push({ name: n.positions, shape: [c.maxPositions, D] });
  for (const l of n.layers) {
    const add = (name: string | null, shape: number[]) => name && specs.push({ name, shape });
    add(l.norm1, [D]);
    add(l.norm1Bias, [D]);
    // q, k, v weights next to each other, then their biases: in the parameter arenas they then
    // form stacks with one stride (Transformer's attention-input stack: one product for the three).
    // Biases draw no random numbers at init, so the order leaves initialWeights' values as they were.
    add(l.q, w(D, qDim));
    add(l.k, w(D, kvDim));
    add(l.v, w(D, kvDim));
    add(l.qBias, [qDim]);
    add(l.kBias, [kvDim]);
    add(l.vBias, [kvDim]);
    add(l.qNorm, [c.headDim]);
    add(l.kNorm, [c.headDim]);
    add(l.o, w(qDim, D));
    add(l.oBias, [D]);
    add(l.norm2, [D]);
    add(l.norm2Bias, [D]);
    add(l.gate, w(D, F));
    add(l.up, w(D, F));
    add(l.upBias, [F]);
    add(l.down, w(F, D));
    add(l.downBias, [D]);
  }
  specs.push({ name: n.finalNorm, shape: [D] });
  if (n.finalNormBias) specs.push({ name: n.finalNormBias, shape: [D] });
  if (n.head !== n.tokens) specs.push({ name: n.head, shape: [c.vocabSize, D] });
  return specs;
}

function columns(t: Tensor, from: number, to: number): Tensor {
  const [rows, cols] = t.shape;
  const width = to - from;
  const data = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) data.set(t.data.subarray(r * cols + from, r * cols + to), r * width);
  return { shape: [rows, width], data };
}

function concatColumns(parts: Tensor[]): Tensor {
  const rows = parts[0].shape[0];
  const width = parts.reduce((s, p) => s + p.shape[1], 0);
  const data = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    let at = r * width;
    for (const p of parts) {
      data.set(p.data.subarray(r * p.shape[1], (r + 1) * p.shape[1]), at);
      at += p.shape[1];
    }
  }
  return { shape: [rows, width], data };
}

/**
 * Hugging Face tensors → the engine's tensors (GPT-2 c_attn split into q/k/v). Missing or
 * misshapen tensors are named; unknown extra tensors (e.g. GPT-2's attn.bias buffers) are ignored.
 */
export function fromHfTensors(c: ModelConfig, hf: Map<string, Tensor>): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  const D = c.hiddenSize;
  if (c.architecture === 'gpt2') {
    for (let i = 0; i < c.numLayers; i++) {
      const p = gpt2Layer(i);
      const w = hf.get(`${p}attn.c_attn.weight`);
      const b = hf.get(`${p}attn.c_attn.bias`);
      if (!w || !b) throw new Error(`model.safetensors: missing ${p}attn.c_attn.${w ? 'bias' : 'weight'}`);
      expectShape(`${p}attn.c_attn.weight`, w.shape, [D, 3 * D]);
      expectShape(`${p}attn.c_attn.bias`, b.shape, [3 * D]);
      ['q', 'k', 'v'].forEach((name, j) => {
        out.set(`${p}attn.${name}.weight`, columns(w, j * D, (j + 1) * D));
        out.set(`${p}attn.${name}.bias`, { shape: [D], data: b.data.slice(j * D, (j + 1) * D) });
      });
    }
  }
  for (const spec of parameterSpecs(c)) {
    if (out.has(spec.name)) continue;
    // Some checkpoints prefix GPT-2 names without "transformer." (the bare GPT2Model).
    const t = hf.get(spec.name) ?? hf.get(spec.name.replace(/^transformer\./, ''));
    if (!t) throw new Error(`model.safetensors: missing tensor ${spec.name} (shape ${JSON.stringify(spec.shape)})`);
    expectShape(spec.name, t.shape, spec.shape);
    out.set(spec.name, t);
  }
  return out;
}

/** The engine's tensors → Hugging Face names and layouts (GPT-2 q/k/v joined into c_attn). */
export function toHfTensors(c: ModelConfig, tensors: Map<string, Tensor>): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  const fused = new Set<string>();
  if (c.architecture === 'gpt2') {
    for (let i = 0; i < c.numLayers; i++) {
      const p = gpt2Layer(i);
      const parts = ['q', 'k', 'v'].map((n) => `${p}attn.${n}`);
      out.set(`${p}attn.c_attn.weight`, concatColumns(parts.map((n) => tensors.get(`${n}.weight`)!)));
      const biases = parts.map((n) => tensors.get(`${n}.bias`)!.data);
      const bias = new Float32Array(3 * c.hiddenSize);
      biases.forEach((b, j) => bias.set(b, j * c.hiddenSize));
      out.set(`${p}attn.c_attn.bias`, { shape: [3 * c.hiddenSize], data: bias });
      for (const n of parts) fused.add(`${n}.weight`).add(`${n}.bias`);
    }
  }
  for (const [name, t] of tensors) if (!fused.has(name)) out.set(name, t);
  return out;
}

/** Every tensor's name and shape as toHfTensors writes them (GPT-2's q, k, v as one c_attn), from the config alone. */
export function hfParameterShapes(c: ModelConfig): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const spec of parameterSpecs(c)) {
    const fused = c.architecture === 'gpt2' ? /^(.*attn\.)[qkv]\.(weight|bias)$/.exec(spec.name) : null;
    if (fused) out.set(`${fused[1]}c_attn.${fused[2]}`, fused[2] === 'weight' ? [c.hiddenSize, 3 * c.hiddenSize] : [3 * c.hiddenSize]);
    else out.set(spec.name, spec.shape);
  }
  return out;
}

function expectShape(name: string, got: number[], want: number[]): void {
  if (got.length !== want.length || got.some((d, i) => d !== want[i])) {
    throw new Error(`model.safetensors: ${name} has shape ${JSON.stringify(got)}, config.json implies ${JSON.stringify(want)}`);
  }
}
