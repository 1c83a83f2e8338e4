// Page side of test/browser/dispatchPair.test.ts: the same work recorded with dispatch pairing
// off and on (src/gpu/dispatchPair.ts), compared bit for bit, with the dispatch counts.
import { GpuRuntime } from '../../../src/gpu/runtime';
import { configFromHf, type ModelConfig } from '../../../src/model/config';
import { initialWeights } from '../../../src/model/init';
import { ParameterStore } from '../../../src/model/parameters';
import { SftTrainer } from '../../../src/model/sft';
import { ByteTokenizer } from '../../../src/model/tokenizer';
import { Transformer } from '../../../src/model/transformer';
import { recordMatmul, type MatmulShape } from '../../../src/ops/matmul';

const tok = new ByteTokenizer();

function config(architecture: 'gpt2' | 'llama'): ModelConfig {
  const shared = { vocab_size: tok.vocabSize, bos_token_id: tok.bosTokenId, eos_token_id: tok.eosTokenId };
  if (architecture === 'gpt2') return configFromHf({ ...shared, model_type: 'gpt2', n_embd: 32, n_layer: 2, n_head: 4, n_inner: 64, n_positions: 64 });
  return configFromHf({ ...shared, model_type: 'llama', hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 64, max_position_embeddings: 64 });
}

const EXAMPLES = [
  ['Name a color.', 'Blue.'],
  ['Say hi.', 'Hello there!'],
].map(([p, c]) => ({ prompt: [tok.bosTokenId, ...tok.encode(`Q: ${p}\nA: `)], completion: [...tok.encode(c), tok.eosTokenId] }));

/** Every float's bits, tensor by tensor in name order, as one list. */
function bits(tensors: Map<string, { data: Float32Array }>): number[] {
  return [...tensors.keys()].sort().flatMap((k) => Array.from(new Uint32Array(tensors.get(k)!.data.buffer)));
}

/** Positions where two bit lists differ (at most 5 reported) and the total. */
function differences(a: number[], b: number[]): { count: number; first: number[] } {
  const first: number[] = [];
  let count = a.length === b.length ? 0 : Math.abs(a.length - b.length);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      count++;
      if (first.length < 5) first.push(i);
    }
  }
  return { count, first };
}

/**
 * Two SFT steps of a 2-layer fixture (the base model, or LoRA adapters on a frozen one; two
 * sequences, or one of 6 tokens), once
 * with pairing off and once on, from the same weights: losses, gradients, values and AdamW
 * moments compared bit for bit, and each run's dispatches per step.
 */
export async function trainStepBits(pageRt: GpuRuntime, input: { architecture: 'gpt2' | 'llama'; lora: boolean; short?: boolean; gpuPlan?: boolean }) {
  // gpuPlan: a runtime of its own that takes a hardware GPU's kernels (tiled products and
  // attention, norm rows of dim/4 threads, multi-tensor optimizer) on this adapter.
  const rt = input.gpuPlan ? await GpuRuntime.create() : pageRt;
  if (input.gpuPlan) (rt.info as { isFallback: boolean }).isFallback = false;
  try {
    return await trainStepBitsOn(rt, input);
  } finally {
    if (input.gpuPlan) rt.destroy();
  }
}

async function trainStepBitsOn(rt: GpuRuntime, input: { architecture: 'gpt2' | 'llama'; lora: boolean; short?: boolean }) {
  // Short: one sequence of 6 tokens, so every product has at most 8 rows (the skinny kernels).
  const examples = input.short ? [{ prompt: [tok.bosTokenId, 65, 66], completion: [67, 68, tok.eosTokenId] }] : EXAMPLES;
  const c = config(input.architecture);
  const run = async (pairing: boolean) => {
    rt.pairDispatches = pairing;
    try {
      const model = new Transformer(rt, c, ParameterStore.create(rt, c, initialWeights(c, 7), { frozen: input.lora }));
      if (input.lora) model.attachLora({ r: 4, lora_alpha: 8, target_modules: 'all-linear' }, 3);
      const trainer = new SftTrainer(rt, model, tok.padTokenId, { learning_rate: 1e-2, lr_scheduler_type: 'constant' });
      const losses: number[] = [];
      let dispatches = 0;
      for (let s = 0; s < 2; s++) {
        const before = rt.snapshotCounters();
        losses.push((await trainer.trainStep(examples)).loss);
        dispatches = rt.countersSince(before).dispatches;
      }
      const out = { losses, dispatches, grad: bits(await model.params.read('grad')), value: bits(await model.params.read('value')), m: bits(await model.params.read('m')), v: bits(await model.params.read('v')) };
      model.params.destroy();
      return out;
    } finally {
      rt.pairDispatches = true;
    }
  };
  const alone = await run(false);
  const paired = await run(true);
  return {
    losses: [alone.losses, paired.losses],
    dispatches: [alone.dispatches, paired.dispatches],
    values: alone.value.length,
    differ: { grad: differences(alone.grad, paired.grad), value: differences(alone.value, paired.value), m: differences(alone.m, paired.m), v: differences(alone.v, paired.v) },
  };
}

/**
 * Two products recorded back to back, independent or the second reading the first's output,
 * with a kernel path forced (the tiled kernels use workgroup memory, barriers and
 * local_invocation_id; a GPU pairs them), writing two buffers or two ranges of one (disjoint, or
 * overlapping: those must stay apart): C1, C2 bits with pairing off and on, and dispatches.
 */
export async function productPair(
  rt: GpuRuntime,
  input: { path: 'tiled' | 'small' | 'auto'; dependent: boolean; output?: 'separate' | 'disjoint' | 'overlapping'; m: number; n: number; k: number },
) {
  const { m, n, k } = input;
  const fill = (count: number, seed: number) => Float32Array.from({ length: count }, (_, i) => Math.sin(seed * 7.1 + i * 0.37));
  const a = rt.upload(fill(m * k, 1));
  const b = rt.upload(fill(k * n, 2));
  const a2 = rt.upload(fill(m * k, 3));
  const b2 = rt.upload(fill(k * n, 4));
  const bytes = m * n * 4;
  const run = async (pairing: boolean) => {
    rt.pairDispatches = pairing;
    const out = rt.storage(3 * bytes);
    const c2Buffer = input.output && input.output !== 'separate' ? out : rt.storage(bytes);
    // Binding offsets are 256-byte aligned: C2 starts right after C1, or 256 bytes into it.
    const c2Offset = input.output === 'disjoint' ? Math.ceil(bytes / 256) * 256 : input.output === 'overlapping' ? 256 : 0;
    const c1 = { buffer: out, offset: 0, size: bytes };
    const c2 = { buffer: c2Buffer, offset: c2Offset, size: bytes };
    try {
      // Dispatches are counted as they are encoded (a held-back one at the latest at submit).
      const before = rt.snapshotCounters();
      const rec = rt.recorder('product pair');
      const shape: MatmulShape = { m, n, k, path: input.path };
      recordMatmul(rt, rec, { a, b, c: c1 }, shape);
      // Dependent: C2 = C1 . B2 (square shapes), which must wait for C1.
      if (input.dependent) recordMatmul(rt, rec, { a: c1, b: b2, c: c2 }, shape);
      else recordMatmul(rt, rec, { a: a2, b: b2, c: c2 }, { ...shape, transB: false });
      const r1 = rec.readF32(out, m * n);
      const r2 = rec.readF32(c2Buffer, m * n, c2Offset / 4);
      await rec.submit();
      const dispatches = rt.countersSince(before).dispatches;
      return { c1: Array.from(new Uint32Array((await r1).buffer)), c2: Array.from(new Uint32Array((await r2).buffer)), dispatches };
    } finally {
      rt.pairDispatches = true;
      rt.release(...new Set([out, c2Buffer]));
    }
  };
  const alone = await run(false);
  const paired = await run(true);
  rt.release(a, b, a2, b2);
  return { limit: rt.device.limits.maxComputeWorkgroupStorageSize, dispatches: [alone.dispatches, paired.dispatches], differ: differences([...alone.c1, ...alone.c2], [...paired.c1, ...paired.c2]), nonZero: alone.c2.some((x) => x !== 0) };
}
