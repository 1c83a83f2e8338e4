// The embedded default policy in public/models/tiny-gpt2-byte/ (built by
// scripts/pretrain_default.py): its files load with the engine's readers, hold every GPT-2 tensor
// with the right shape, its tokenizer.json gives exactly the ByteTokenizer ids, and the weights
// are trained (a float64 forward written here predicts corpus-style text well).
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configFromHf } from '../../../src/model/config';
import { HfTokenizer } from '../../../src/model/hfTokenizer';
import { readSafetensors, type Tensor } from '../../../src/model/safetensors';
import { ByteTokenizer } from '../../../src/model/tokenizer';

const dir = new URL('../../../public/models/tiny-gpt2-byte/', import.meta.url);
const readJson = (name: string) => JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as Record<string, unknown>;

function loadWeights(): Map<string, Tensor> {
  const bytes = readFileSync(new URL('model.safetensors', dir));
  return readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).tensors;
}

/** GPT-2's reversible byte -> printable character table (bytes_to_unicode). */
function byteSymbols(): string[] {
  const printable = new Set<number>();
  for (const [a, b] of [[33, 126], [161, 172], [174, 255]]) for (let x = a; x <= b; x++) printable.add(x);
  let extra = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCharCode(printable.has(b) ? b : 256 + extra++));
}

const PROMPT_TEMPLATE = 'Instruction: {prompt}\nResponse: ';
const SAMPLE_TEXTS = [
  'Hello, world!',
  'Instruction: Describe cats.\nResponse: ',
  '  two  spaces,\ttab and\r\nnew line ',
  "naïve café — 東京 🚀 ñ ü ß €",
  'Ünïcödé: Ελληνικά, русский, العربية, हिन्दी, 한국어',
  '\u0001\u001f\u007f control bytes and digits 0123456789 !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)).join(''), // every 1-2 byte UTF-8 lead and tail
];

describe('embedded default model: public/models/tiny-gpt2-byte', () => {
  const rawConfig = readJson('config.json');
  const config = configFromHf(rawConfig);

  it('config.json: GPT-2 over the 259-id byte vocabulary, with the byte tokenizer and prompt template for the app', () => {
    expect(config).toMatchObject({
      architecture: 'gpt2', vocabSize: 259, bosTokenId: 256, eosTokenId: 257, tieWordEmbeddings: true, normEps: 1e-5,
    });
    expect(config.maxPositions).toBe(256);
    expect(config.hiddenSize % config.numHeads).toBe(0);
    expect(rawConfig.pad_token_id).toBe(258);
    expect(rawConfig.activation_function).toBe('gelu_new');
    expect(rawConfig.rubric_playground).toEqual({ tokenizer: 'byte', prompt_template: PROMPT_TEMPLATE });
    const generation = readJson('generation_config.json');
    expect(generation).toMatchObject({ bos_token_id: 256, eos_token_id: 257, pad_token_id: 258 });
    const tokConfig = readJson('tokenizer_config.json');
    expect(tokConfig).toMatchObject({ bos_token: '<|bos|>', eos_token: '<|endoftext|>', pad_token: '<|pad|>' });
  });

  it('model.safetensors: every GPT-2 tensor with its shape, finite F32 values, nothing else, under 8 MB', () => {
    const size = statSync(new URL('model.safetensors', dir)).size;
    expect(size).toBeLessThan(8 * 1024 * 1024);
    const { hiddenSize: D, vocabSize: V, maxPositions: P, intermediateSize: Fi, numLayers: L } = config;
    const expected = new Map<string, number[]>([['transformer.wte.weight', [V, D]], ['transformer.wpe.weight', [P, D]]]);
    for (let i = 0; i < L; i++) {
      const p = `transformer.h.${i}.`;
      for (const [name, shape] of [
        ['ln_1.weight', [D]], ['ln_1.bias', [D]], ['attn.c_attn.weight', [D, 3 * D]], ['attn.c_attn.bias', [3 * D]],
        ['attn.c_proj.weight', [D, D]], ['attn.c_proj.bias', [D]], ['ln_2.weight', [D]], ['ln_2.bias', [D]],
        ['mlp.c_fc.weight', [D, Fi]], ['mlp.c_fc.bias', [Fi]], ['mlp.c_proj.weight', [Fi, D]], ['mlp.c_proj.bias', [D]],
      ] as [string, number[]][]) expected.set(p + name, shape);
    }
    expected.set('transformer.ln_f.weight', [D]);
    expected.set('transformer.ln_f.bias', [D]);
    const bytes = readFileSync(new URL('model.safetensors', dir));
    const file = readSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expect([...file.tensors.keys()].sort()).toEqual([...expected.keys()].sort());
    let params = 0;
    for (const [name, shape] of expected) {
      const t = file.tensors.get(name)!;
      expect(t.shape, name).toEqual(shape);
      expect(file.dtypes.get(name), name).toBe('F32');
      expect(t.data.every(Number.isFinite), `${name} is finite`).toBe(true);
      params += t.data.length;
    }
    expect(params * 4).toBeLessThan(size);
    // Trained, not freshly initialised: LayerNorm gains moved away from 1.
    expect(file.tensors.get('transformer.ln_f.weight')!.data.some((x) => Math.abs(x - 1) > 0.05)).toBe(true);
  });

  it('tokenizer.json: vocab maps bytes_to_unicode(b) to b, no merges, three special tokens', () => {
    const tj = readJson('tokenizer.json') as { model: { type: string; vocab: Record<string, number>; merges: unknown[] }; added_tokens: { id: number; content: string; special: boolean }[] };
    expect(tj.model.type).toBe('BPE');
    expect(tj.model.merges).toEqual([]);
    byteSymbols().forEach((s, b) => expect(tj.model.vocab[s], `byte ${b}`).toBe(b));
    expect(tj.added_tokens.map((t) => [t.id, t.content, t.special])).toEqual([
      [256, '<|bos|>', true], [257, '<|endoftext|>', true], [258, '<|pad|>', true],
    ]);
    expect(Object.keys(tj.model.vocab)).toHaveLength(259);
  });

  it('HfTokenizer on tokenizer.json encodes and decodes exactly like ByteTokenizer', async () => {
    const hf = await HfTokenizer.fromJson(readJson('tokenizer.json'), readJson('tokenizer_config.json'), config.vocabSize);
    const bytes = new ByteTokenizer();
    expect([hf.bosTokenId, hf.eosTokenId, hf.padTokenId, hf.vocabSize]).toEqual([256, 257, 258, 259]);
    for (const text of SAMPLE_TEXTS) {
      const ids = bytes.encode(text);
      expect(hf.encode(text), JSON.stringify(text)).toEqual(ids);
      expect(hf.decode([256, ...ids, 257, 258]), JSON.stringify(text)).toBe(text);
    }
  });

  it('the weights are trained: a float64 forward predicts corpus-style examples at under 0.8 nats/token', () => {
    // An untrained model sits near ln(259) = 5.6 nats/token and a byte-frequency model near 3; the
    // shipped one gives 0.24 and 0.29 here (held-out loss 0.21 in RECIPE.md), an undertrained one
    // (1200 steps, held-out 0.52) gave 0.56 and 0.86.
    const tok = new ByteTokenizer();
    const w = loadWeights();
    for (const [instruction, response] of [
      ['Describe cats.', 'Cats are curious and playful. They sleep for many hours every day.'],
      ['Give a tip about rain.', 'Carry an umbrella when the sky looks gray.'],
    ]) {
      const ids = [256, ...tok.encode(PROMPT_TEMPLATE.replace('{prompt}', instruction) + response), 257];
      const loss = meanNextTokenLoss(w, config.numHeads, config.normEps, ids);
      expect(loss, instruction).toBeLessThan(0.8);
    }
  });
});

/** Mean next-token cross-entropy of a GPT-2 (HF layout, Conv1D [in, out], tied head) on one sequence, in float64. */
function meanNextTokenLoss(w: Map<string, Tensor>, heads: number, eps: number, ids: number[]): number {
  const get = (name: string) => w.get(name)!;
  const wte = get('transformer.wte.weight');
  const [V, D] = wte.shape;
  const T = ids.length;
  const Dh = D / heads;
  let x = ids.map((id, t) => Array.from({ length: D }, (_, d) => wte.data[id * D + d] + get('transformer.wpe.weight').data[t * D + d]));
  const layerNorm = (rows: number[][], prefix: string) =>
    rows.map((r) => {
      const mean = r.reduce((a, b) => a + b, 0) / D;
      const variance = r.reduce((a, b) => a + (b - mean) ** 2, 0) / D;
      const g = get(prefix + '.weight').data;
      const b = get(prefix + '.bias').data;
      return r.map((v, d) => ((v - mean) / Math.sqrt(variance + eps)) * g[d] + b[d]);
    });
  const linear = (rows: number[][], prefix: string) => {
    const W = get(prefix + '.weight');
    const [inDim, outDim] = W.shape;
    const bias = get(prefix + '.bias').data;
    return rows.map((r) => {
      const out = Array.from(bias);
      for (let i = 0; i < inDim; i++) for (let o = 0; o < outDim; o++) out[o] += r[i] * W.data[i * outDim + o];
      return out;
    });
  };
  const gelu = (v: number) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
  for (let l = 0; ; l++) {
    const p = `transformer.h.${l}.`;
    if (!w.has(p + 'ln_1.weight')) break;
    const qkv = linear(layerNorm(x, p + 'ln_1'), p + 'attn.c_attn');
    const attended = qkv.map((_, t) => {
      const out = new Array<number>(D).fill(0);
      for (let h = 0; h < heads; h++) {
        const scores = Array.from({ length: t + 1 }, (_, j) => {
          let s = 0;
          for (let d = 0; d < Dh; d++) s += qkv[t][h * Dh + d] * qkv[j][D + h * Dh + d];
          return s / Math.sqrt(Dh);
        });
        const m = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= t; j++) for (let d = 0; d < Dh; d++) out[h * Dh + d] += (e[j] / z) * qkv[j][2 * D + h * Dh + d];
      }
      return out;
    });
    const projected = linear(attended, p + 'attn.c_proj');
    x = x.map((r, t) => r.map((v, d) => v + projected[t][d]));
    const hidden = linear(layerNorm(x, p + 'ln_2'), p + 'mlp.c_fc').map((r) => r.map(gelu));
    const mlp = linear(hidden, p + 'mlp.c_proj');
    x = x.map((r, t) => r.map((v, d) => v + mlp[t][d]));
  }
  const final = layerNorm(x, 'transformer.ln_f');
  let total = 0;
  for (let t = 0; t < T - 1; t++) {
    const logits = Array.from({ length: V }, (_, v) => final[t].reduce((a, hd, d) => a + hd * wte.data[v * D + d], 0));
    const m = Math.max(...logits);
    const logZ = m + Math.log(logits.reduce((a, b) => a + Math.exp(b - m), 0));
    total += logZ - logits[ids[t + 1]];
  }
  return total / (T - 1);
}
