// Peer for bench/model.ts: the same GPT-2 (learned positions, LayerNorm, gelu_new, tied head)
// written in jax-js on its WebGPU device, with gradients from valueAndGrad, compiled by jit.
// Same parameter tensors (the engine's q/k/v split and Conv1D [in, out] layouts), same batch,
// same loss: the mean next-token cross-entropy over the masked positions.
//
// What jax-js 0.1.25 gets wrong, and how this file steps around it:
// - nn.oneHot(t, n) slices eye(n), whose kernel indexes the n x n matrix with one int32: past
//   n = 46,340 (n^2 > 2^31) the index wraps, so oneHot(t, 50257) has 50,256 stray ones (eager
//   too; GPT-2's loss came out 33,445 instead of 10.9). Under jit the product with a one-hot
//   was wrong already at n = 20,000. `oneHot` below compares t with arange(n) instead, [rows, n]
//   elements, and agrees with np.take / takeAlongAxis in both modes at 259, 20,000 and 50,257.
// - jit cannot differentiate np.take or takeAlongAxis ("jit: routine primitive scatter input is
//   not imm"): under jit the token embedding is a one-hot matmul, [rows, V] x [V, D], which costs
//   as much as the LM head's forward product (eager mode uses np.take), and the picked
//   log-probability is a product with the one-hot in both modes.
import { blockUntilReady, defaultDevice, init, jit, nn, numpy as np, tree, valueAndGrad, type Array as JaxArray } from '@jax-js/jax';
import type { ModelConfig } from '../../src/model/config';
import type { Tensor } from '../../src/model/safetensors';
import { modelNames } from '../../src/model/weights';
import type { PeerBatch, PeerRunner, PeerTrainConfig } from './tfjsGpt2';

type Params = { [name: string]: JaxArray };

let ready: Promise<string | null> | null = null;

/** Starts jax-js's WebGPU device and makes it the default; resolves to an error message or null. */
export function jaxWebGpu(): Promise<string | null> {
  ready ??= (async () => {
    try {
      const devices = await init('webgpu');
      if (!devices.includes('webgpu')) return `jax-js init("webgpu") found no WebGPU device (got: ${devices.join(', ') || 'none'})`;
      defaultDevice('webgpu');
      return null;
    } catch (err) {
      return `jax-js init("webgpu") threw: ${(err as Error).message}`;
    }
  })();
  return ready;
}

export type JaxMode = 'jit' | 'eager';

export async function jaxGpt2Runner(config: ModelConfig, weights: Map<string, Tensor>, b: PeerBatch, mode: JaxMode): Promise<PeerRunner> {
  if (config.architecture !== 'gpt2') throw new RangeError(`the jax-js peer implements GPT-2 only, got ${config.architecture}`);
  const error = await jaxWebGpu();
  if (error) throw new Error(error);
  const names = modelNames(config);
  const { batch: B, seqLen: T } = b;
  const D = config.hiddenSize;
  const H = config.numHeads;
  const hd = config.headDim;
  const V = config.vocabSize;
  const eps = config.normEps;
  const rows = B * T;
  const count = b.mask.reduce((s, m) => s + m, 0);

  const params: Params = {};
  for (const [name, t] of weights) params[name] = np.array(t.data, { shape: t.shape, device: 'webgpu' });
  const ids = np.array(Int32Array.from(b.ids), { shape: [rows], dtype: np.int32, device: 'webgpu' });
  const targets = np.array(Int32Array.from(b.targets), { shape: [rows], dtype: np.int32, device: 'webgpu' });
  const mask = np.array(b.mask, { shape: [rows], device: 'webgpu' });
  await blockUntilReady([params, ids, targets, mask]);

  /** [rows, n] float one-hot of integer `t` by comparison (see the top: not nn.oneHot). */
  const oneHot = (t: JaxArray, n: number) => np.equal(t.reshape([rows, 1]), np.arange(n).reshape([1, n])).astype(np.float32);

  // jax-js counts references: every op consumes its arguments, `.ref` keeps one for a later use.
  const lossOf = (p: Params, tokenIds: JaxArray, next: JaxArray, weight: JaxArray): JaxArray => {
    const layerNorm = (x: JaxArray, g: string, bias: string | null) => {
      const y = nn.standardize(x, -1, { epsilon: eps }).mul(p[g]);
      return bias ? y.add(p[bias]) : y;
    };
    const linear = (x: JaxArray, w: string, bias: string | null) => {
      const y = np.matmul(x, p[w]);
      return bias ? y.add(p[bias]) : y;
    };
    // The token table is also the LM head (tied): its first use keeps a reference.
    const tokenRows = mode === 'jit' ? np.matmul(oneHot(tokenIds, V), p[names.tokens].ref) : np.take(p[names.tokens].ref, tokenIds, 0);
    let x = tokenRows.reshape([B, T, D]).add(p[names.positions!].slice([0, T])).reshape([rows, D]);
    for (const l of names.layers) {
      const h = layerNorm(x.ref, l.norm1, l.norm1Bias);
      const q = linear(h.ref, l.q, l.qBias).reshape([B, T, H, hd]);
      const k = linear(h.ref, l.k, l.kBias).reshape([B, T, H, hd]);
      const v = linear(h, l.v, l.vBias).reshape([B, T, H, hd]);
      const att = nn.dotProductAttention(q, k, v, { isCausal: true }).reshape([rows, D]);
      x = x.add(linear(att, l.o, l.oBias));
      const h2 = layerNorm(x.ref, l.norm2, l.norm2Bias);
      x = x.add(linear(nn.gelu(linear(h2, l.up, l.upBias), { approximate: true }), l.down, l.downBias));
    }
    const hf = layerNorm(x, names.finalNorm, names.finalNormBias);
    const logits = np.matmul(hf, p[names.head].transpose()); // [rows, V]
    const picked = nn.logSoftmax(logits, -1).mul(oneHot(next, V)).sum(-1);
    return picked.mul(weight).sum().mul(-1 / count);
  };
  const grads = valueAndGrad(lossOf);
  const fn = mode === 'jit' ? jit(grads) : grads;

  /**
   * The full train step as a JAX user writes it, one function (jit-compiled in 'jit' mode):
   * valueAndGrad, global-norm clipping, AdamW as torch.optim.AdamW. beta1^t and beta2^t live on
   * the device in the state (as optax's count), so one compiled step serves every t.
   */
  const trainStepOf =
    (hp: PeerTrainConfig) =>
    (p: Params, m: Params, v: Params, b1t: JaxArray, b2t: JaxArray, tokenIds: JaxArray, next: JaxArray, weight: JaxArray) => {
      const [loss, g] = valueAndGrad(lossOf)(tree.ref(p), tokenIds, next, weight);
      const keys = Object.keys(p);
      let sumSq: JaxArray | null = null;
      for (const k of keys) {
        const s = np.square(g[k].ref).sum();
        sumSq = sumSq ? sumSq.add(s) : s;
      }
      const norm = np.sqrt(sumSq!);
      const clip = hp.max_grad_norm > 0 ? np.minimum(np.reciprocal(norm.ref.add(1e-6)).mul(hp.max_grad_norm), 1) : null;
      const b1 = b1t.mul(hp.adam_beta1);
      const b2 = b2t.mul(hp.adam_beta2);
      const stepSize = np.reciprocal(b1.ref.mul(-1).add(1)).mul(hp.learning_rate); // lr / (1 - beta1^t)
      const invBc2Sqrt = np.reciprocal(np.sqrt(b2.ref.mul(-1).add(1))); // 1 / sqrt(1 - beta2^t)
      const newP: Params = {};
      const newM: Params = {};
      const newV: Params = {};
      for (const k of keys) {
        const grad = clip ? g[k].mul(clip.ref) : g[k];
        const mt = m[k].mul(hp.adam_beta1).add(grad.ref.mul(1 - hp.adam_beta1));
        const vt = v[k].mul(hp.adam_beta2).add(np.square(grad).mul(1 - hp.adam_beta2));
        const denom = np.sqrt(vt.ref).mul(invBc2Sqrt.ref).add(hp.adam_epsilon);
        const decayed = hp.weight_decay ? p[k].mul(1 - hp.learning_rate * hp.weight_decay) : p[k];
        newP[k] = decayed.sub(mt.ref.div(denom).mul(stepSize.ref));
        newM[k] = mt;
        newV[k] = vt;
      }
      clip?.dispose();
      stepSize.dispose();
      invBc2Sqrt.dispose();
      return [loss, norm, newP, newM, newV, b1, b2] as [JaxArray, JaxArray, Params, Params, Params, JaxArray, JaxArray];
    };
  type TrainState = { step: ReturnType<typeof trainStepOf>; m: Params; v: Params; b1t: JaxArray; b2t: JaxArray };
  let train: TrainState | null = null;
  const scalarOne = () => np.array(new Float32Array([1]), { shape: [], device: 'webgpu' });

  return {
    notes: mode === 'jit' ? 'jit(valueAndGrad), token embedding as a one-hot matmul' : 'eager valueAndGrad, np.take embedding',
    async step() {
      const t0 = performance.now();
      const [value, g] = fn(tree.ref(params), ids.ref, targets.ref, mask.ref);
      // jax-js is lazy: wait until every gradient is computed, then read the loss.
      await blockUntilReady(g);
      const loss = (await value.data())[0];
      const seconds = (performance.now() - t0) / 1000;
      tree.dispose(g);
      return { seconds, loss };
    },
    async trainStep(hp) {
      const t0 = performance.now();
      if (!train) {
        const zeros = () => Object.fromEntries([...weights].map(([name, t]) => [name, np.zeros(t.shape, { device: 'webgpu' })]));
        const step = trainStepOf(hp);
        train = { step: mode === 'jit' ? (jit(step) as unknown as typeof step) : step, m: zeros(), v: zeros(), b1t: scalarOne(), b2t: scalarOne() };
      }
      const state = train;
      // The parameters and moments move into the step (jax-js ownership); the new ones replace them.
      const [value, norm, p, m, v, b1t, b2t] = state.step({ ...params }, state.m, state.v, state.b1t, state.b2t, ids.ref, targets.ref, mask.ref);
      Object.assign(params, p);
      Object.assign(state, { m, v, b1t, b2t });
      // jax-js is lazy: wait until the updated parameters and moments exist, then read the scalars.
      await blockUntilReady([p, m, v]);
      const [loss, gradNorm] = await Promise.all([value.data(), norm.data()]);
      return { seconds: (performance.now() - t0) / 1000, loss: loss[0], gradNorm: gradNorm[0] };
    },
    async gradNorm() {
      const [value, g] = fn(tree.ref(params), ids.ref, targets.ref, mask.ref);
      value.dispose();
      let sum = 0;
      for (const leaf of tree.leaves(g)) sum += (await np.square(leaf).sum().data())[0];
      return Math.sqrt(sum);
    },
    dispose() {
      if (mode === 'jit') (fn as typeof fn & { dispose(): void }).dispose();
      if (train) {
        if (mode === 'jit') (train.step as unknown as { dispose(): void }).dispose();
        tree.dispose([train.m, train.v, train.b1t, train.b2t]);
      }
      tree.dispose([params, ids, targets, mask]);
    },
  };
}
