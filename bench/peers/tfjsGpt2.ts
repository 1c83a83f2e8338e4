// Peer for bench/model.ts: the same GPT-2 (learned positions, LayerNorm, gelu_new, tied head)
// written in TensorFlow.js ops on its WebGPU backend, with gradients from tf.valueAndGrads.
// Same parameter tensors (the engine's q/k/v split and Conv1D [in, out] layouts), same batch,
// same loss: the mean next-token cross-entropy over the masked positions.
//
// TensorFlow.js is not imported here: its type declarations pull an old global @webgpu/types
// into the whole project's tsc run. bench/model.html loads tfjs-core and tfjs-backend-webgpu
// and hands the module over; TfApi below is the slice of it this file uses.
import type { ModelConfig } from '../../src/model/config';
import type { Tensor } from '../../src/model/safetensors';
import { modelNames } from '../../src/model/weights';

export interface TfTensor {
  readonly shape: number[];
  dispose(): void;
  data(): Promise<ArrayLike<number>>;
}

export interface TfApi {
  findBackendFactory(name: string): unknown;
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  getBackend(): string;
  tensor(values: Float32Array | Int32Array, shape: number[], dtype?: 'float32' | 'int32'): TfTensor;
  scalar(value: number): TfTensor;
  tidy<T>(fn: () => T): T;
  valueAndGrads(f: (...args: TfTensor[]) => TfTensor): (args: TfTensor[]) => { value: TfTensor; grads: TfTensor[] };
  gather(x: TfTensor, indices: TfTensor, axis?: number): TfTensor;
  slice(x: TfTensor, begin: number[], size: number[]): TfTensor;
  matMul(a: TfTensor, b: TfTensor, transposeA?: boolean, transposeB?: boolean): TfTensor;
  add(a: TfTensor, b: TfTensor): TfTensor;
  sub(a: TfTensor, b: TfTensor): TfTensor;
  mul(a: TfTensor, b: TfTensor): TfTensor;
  reshape(x: TfTensor, shape: number[]): TfTensor;
  transpose(x: TfTensor, perm: number[]): TfTensor;
  moments(x: TfTensor, axis: number, keepDims: boolean): { mean: TfTensor; variance: TfTensor };
  rsqrt(x: TfTensor): TfTensor;
  tanh(x: TfTensor): TfTensor;
  square(x: TfTensor): TfTensor;
  softmax(x: TfTensor): TfTensor;
  logSoftmax(x: TfTensor): TfTensor;
  oneHot(indices: TfTensor, depth: number): TfTensor;
  sum(x: TfTensor, axis?: number): TfTensor;
  sqrt(x: TfTensor): TfTensor;
  div(a: TfTensor, b: TfTensor): TfTensor;
  minimum(a: TfTensor, b: TfTensor): TfTensor;
  zerosLike(x: TfTensor): TfTensor;
}

/** The optimizer of a train step, Hugging Face TrainingArguments names (SftTrainer's values). */
export interface PeerTrainConfig {
  learning_rate: number;
  adam_beta1: number;
  adam_beta2: number;
  adam_epsilon: number;
  weight_decay: number;
  /** Global L2-norm clipping as torch.nn.utils.clip_grad_norm_ (scale min(1, max / (norm + 1e-6))); 0 turns it off. */
  max_grad_norm: number;
}

/** One forward + backward pass; `loss` is read back, every gradient is computed. */
export interface PeerRunner {
  step(): Promise<{ seconds: number; loss: number }>;
  /**
   * One full train step on the runner's own parameters: forward + backward, global grad-norm
   * clipping and AdamW (torch.optim.AdamW's update, moments kept across calls; the first call's
   * config holds for the run). Returns the loss and the gradient norm before clipping, read back
   * after the update was queued, so the time covers the whole step. Optional: ours has its own.
   */
  trainStep?(hp: PeerTrainConfig): Promise<{ seconds: number; loss: number; gradNorm: number }>;
  /** One more (untimed) pass; the global L2 norm of all gradients, to check the peer computes the same. */
  gradNorm(): Promise<number>;
  dispose(): void;
  /** How the peer computes, in words (printed with its figures). */
  notes: string;
}

export interface PeerBatch {
  batch: number;
  seqLen: number;
  /** [batch * seqLen] token ids. */
  ids: Uint32Array;
  /** [batch * seqLen] the next token at each position. */
  targets: Uint32Array;
  /** [batch * seqLen] 1 where the prediction counts, else 0. */
  mask: Float32Array;
}

/** Switches TensorFlow.js to its WebGPU backend; resolves to an error message or null. */
export async function tfjsWebGpu(tf: TfApi | undefined): Promise<string | null> {
  if (!tf) return 'TensorFlow.js did not load (window.modelPeers.tf is missing)';
  if (!tf.findBackendFactory('webgpu')) return 'tfjs-backend-webgpu registered no backend (navigator.gpu missing?)';
  try {
    if (tf.getBackend() !== 'webgpu' && !(await tf.setBackend('webgpu'))) return 'tf.setBackend("webgpu") failed (no adapter or device)';
  } catch (err) {
    return `tf.setBackend("webgpu") threw: ${(err as Error).message}`;
  }
  await tf.ready();
  return null;
}

export function tfjsGpt2Runner(tf: TfApi, config: ModelConfig, weights: Map<string, Tensor>, b: PeerBatch): PeerRunner {
  if (config.architecture !== 'gpt2') throw new RangeError(`the TensorFlow.js peer implements GPT-2 only, got ${config.architecture}`);
  const names = modelNames(config);
  const order = [...weights.keys()];
  const index = new Map(order.map((name, i) => [name, i]));
  const params = order.map((name) => {
    const t = weights.get(name)!;
    return tf.tensor(t.data, t.shape, 'float32');
  });
  const { batch: B, seqLen: T } = b;
  const D = config.hiddenSize;
  const H = config.numHeads;
  const hd = config.headDim;
  const V = config.vocabSize;
  const rows = B * T;
  const count = b.mask.reduce((s, m) => s + m, 0);
  const ids = tf.tensor(Int32Array.from(b.ids), [rows], 'int32');
  const targets = tf.tensor(Int32Array.from(b.targets), [rows], 'int32');
  const mask = tf.tensor(b.mask, [rows], 'float32');
  // Additive causal mask [T, T]: 0 on and below the diagonal, -1e9 above (exp underflows to 0).
  const causalHost = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) causalHost[i * T + j] = -1e9;
  const causal = tf.tensor(causalHost, [T, T], 'float32');
  const scale = tf.scalar(1 / Math.sqrt(hd));
  const eps = tf.scalar(config.normEps);
  const half = tf.scalar(0.5);
  const one = tf.scalar(1);
  const geluC = tf.scalar(Math.sqrt(2 / Math.PI));
  const geluK = tf.scalar(0.044715);
  const negInvCount = tf.scalar(-1 / count);
  const constants = [ids, targets, mask, causal, scale, eps, half, one, geluC, geluK, negInvCount];

  const lossOf = (...p: TfTensor[]): TfTensor => {
    const w = (name: string | null): TfTensor => {
      const i = name === null ? undefined : index.get(name);
      if (i === undefined) throw new Error(`TensorFlow.js peer: no tensor ${name}`);
      return p[i];
    };
    const layerNorm = (x: TfTensor, g: string, bias: string | null) => {
      const { mean, variance } = tf.moments(x, -1, true);
      return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps))), w(g)), w(bias));
    };
    const linear = (x: TfTensor, weight: string, bias: string | null) => tf.add(tf.matMul(x, w(weight)), w(bias));
    const heads = (x: TfTensor) => tf.reshape(tf.transpose(tf.reshape(x, [B, T, H, hd]), [0, 2, 1, 3]), [B * H, T, hd]);
    // gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    const gelu = (x: TfTensor) => tf.mul(tf.mul(half, x), tf.add(one, tf.tanh(tf.mul(geluC, tf.add(x, tf.mul(geluK, tf.mul(x, tf.mul(x, x))))))));

    const positions = tf.slice(w(names.positions), [0, 0], [T, D]);
    let x = tf.reshape(tf.add(tf.reshape(tf.gather(w(names.tokens), ids), [B, T, D]), positions), [rows, D]);
    for (const l of names.layers) {
      const h = layerNorm(x, l.norm1, l.norm1Bias);
      const q = heads(linear(h, l.q, l.qBias));
      const k = heads(linear(h, l.k, l.kBias));
      const v = heads(linear(h, l.v, l.vBias));
      const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), scale), causal);
      const att = tf.matMul(tf.softmax(scores), v); // [B*H, T, hd]
      const merged = tf.reshape(tf.transpose(tf.reshape(att, [B, H, T, hd]), [0, 2, 1, 3]), [rows, D]);
      x = tf.add(x, linear(merged, l.o, l.oBias));
      const h2 = layerNorm(x, l.norm2, l.norm2Bias);
      x = tf.add(x, linear(gelu(linear(h2, l.up, l.upBias)), l.down, l.downBias));
    }
    const hf = layerNorm(x, names.finalNorm, names.finalNormBias);
    const logits = tf.matMul(hf, w(names.head), false, true); // [rows, V]
    const picked = tf.sum(tf.mul(tf.logSoftmax(logits), tf.oneHot(targets, V)), 1);
    return tf.mul(tf.sum(tf.mul(picked, mask)), negInvCount);
  };
  const valueAndGrads = tf.valueAndGrads(lossOf);
  // AdamW's moments and step count, made by the first trainStep.
  let adam: { m: TfTensor[]; v: TfTensor[]; t: number } | null = null;

  return {
    notes: 'tf.valueAndGrads over all parameters, eager WebGPU kernels',
    async step() {
      const t0 = performance.now();
      const { value, grads } = tf.tidy(() => valueAndGrads(params));
      // The loss is read after every gradient kernel was queued: the readback waits for them all.
      const loss = (await value.data())[0];
      const seconds = (performance.now() - t0) / 1000;
      value.dispose();
      for (const g of grads) g.dispose();
      return { seconds, loss };
    },
    async trainStep(hp) {
      const t0 = performance.now();
      adam ??= { m: params.map((p) => tf.zerosLike(p)), v: params.map((p) => tf.zerosLike(p)), t: 0 };
      const state = adam;
      state.t++;
      // Bias corrections on the host in f64, as ours (src/ops/adamw.ts) passes them to its kernel.
      const stepSize = hp.learning_rate / (1 - hp.adam_beta1 ** state.t);
      const bc2Sqrt = Math.sqrt(1 - hp.adam_beta2 ** state.t);
      const out = tf.tidy(() => {
        const { value, grads } = valueAndGrads(params);
        // Summed pairwise: tf.addN over every tensor's sum gave a wrong total on SwiftShader (0.02 for a norm of 100).
        const norm = tf.sqrt(grads.map((g) => tf.sum(tf.square(g))).reduce((a, b) => tf.add(a, b)));
        const clip = hp.max_grad_norm > 0 ? tf.minimum(one, tf.div(tf.scalar(hp.max_grad_norm), tf.add(norm, tf.scalar(1e-6)))) : null;
        const b1 = tf.scalar(hp.adam_beta1);
        const b2 = tf.scalar(hp.adam_beta2);
        const c1 = tf.scalar(1 - hp.adam_beta1);
        const c2 = tf.scalar(1 - hp.adam_beta2);
        const lr = tf.scalar(stepSize);
        const bc2 = tf.scalar(bc2Sqrt);
        const eps = tf.scalar(hp.adam_epsilon);
        const decay = hp.weight_decay ? tf.scalar(1 - hp.learning_rate * hp.weight_decay) : null;
        const p: TfTensor[] = [];
        const m: TfTensor[] = [];
        const v: TfTensor[] = [];
        grads.forEach((grad, i) => {
          const g = clip ? tf.mul(grad, clip) : grad;
          m.push(tf.add(tf.mul(state.m[i], b1), tf.mul(g, c1)));
          v.push(tf.add(tf.mul(state.v[i], b2), tf.mul(tf.square(g), c2)));
          const decayed = decay ? tf.mul(params[i], decay) : params[i];
          p.push(tf.sub(decayed, tf.mul(tf.div(m[i], tf.add(tf.div(tf.sqrt(v[i]), bc2), eps)), lr)));
        });
        return { value, norm, p, m, v };
      });
      for (const t of [...params, ...state.m, ...state.v]) t.dispose();
      params.splice(0, params.length, ...out.p);
      state.m = out.m;
      state.v = out.v;
      // Read after every update was queued: WebGPU's queue is in order, so the readback waits for the whole step.
      const [loss, gradNorm] = await Promise.all([out.value.data(), out.norm.data()]);
      const seconds = (performance.now() - t0) / 1000;
      out.value.dispose();
      out.norm.dispose();
      return { seconds, loss: loss[0], gradNorm: gradNorm[0] };
    },
    async gradNorm() {
      const squares = tf.tidy(() => {
        const { grads } = valueAndGrads(params);
        return grads.map((g) => tf.sum(tf.square(g)));
      });
      let sum = 0;
      for (const s of squares) {
        sum += (await s.data())[0];
        s.dispose();
      }
      return Math.sqrt(sum);
    },
    dispose() {
      for (const t of [...params, ...constants, ...(adam ? [...adam.m, ...adam.v] : [])]) t.dispose();
    },
  };
}
