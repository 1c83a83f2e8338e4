// GPU memory of one sampling call (generate.ts), buffer by buffer, in the order the engine
// acquires and releases them: the KV cache and outputs for the whole call, the prefill
// submission (Transformer.prefill: temporaries from a recording scratch, reused from layer to
// layer), then chunks of decode steps (recordDecodeStep, one scratch per chunk). Pure: no GPU
// import. Assumes no sequence stops early (EOS), the largest case.
import type { ModelLayout } from './memoryLayout';
import { adapted, qkvStackBytes, sitesReading } from './memoryLayout';
import { PoolSim, ScratchSim, Tally, type BufferEstimate } from './memorySim';
import type { ProjectionRole } from './loraSites';

const F32 = 4;

/** generate.ts's default decode steps per submission. */
export const DEFAULT_STEPS_PER_SUBMIT = 16;

export interface SamplingShape {
  batch: number;
  /** Longest prompt (the left-padded length). */
  promptTokens: number;
  /** max_completion_length. */
  completionTokens: number;
  /** Decode steps per submission (generate's stepsPerSubmit). */
  stepsPerSubmit?: number;
}

export interface SamplingMemory {
  /** The KV cache: keys and values of every layer. */
  kvCache: BufferEstimate[];
  /** Every other buffer the pool creates for the call (a fresh pool). */
  other: BufferEstimate[];
  /** What the prefill submission acquires (for checks against the engine). */
  prefill: BufferEstimate[];
}

export interface PrefillEstimateOptions {
  /** PrefillOptions.logits: each row's last position (default) or every position. */
  logits?: 'last' | 'all';
  /** Whether LoRA adapters take part (default true; false for the adapters-off KL reference). */
  adapters?: boolean;
}

/** Transformer.prefill over batch × seqLen rows, the returned logits included. */
export function prefillBuffers(L: ModelLayout, batch: number, seqLen: number, options: PrefillEstimateOptions = {}): BufferEstimate[] {
  const logits = options.logits ?? 'last';
  const adapters = options.adapters ?? true;
  const { c, D, F, V, qDim, kvDim } = L;
  const R = batch * seqLen;
  const t = new Tally();
  t.add('prefill token ids', R * 4);
  t.add('prefill position ids', R * 4);
  t.add('prefill pads', batch * 4);
  const s = new ScratchSim(t);
  const lora = (layer: number, input: Parameters<typeof sitesReading>[2]) => {
    const sites = adapters ? sitesReading(L, layer, input).length : 0;
    for (let i = 0; i < sites; i++) s.done(s.take('prefill lora H', R * L.r * F32));
  };
  // From the norm's output n1 to attention's output, as Transformer.layerForward runs it.
  const stackedAttention = (layer: number, n1: number) => {
    const qkv = s.take('prefill q, k, v', qkvStackBytes(L, R));
    lora(layer, 'attention_input');
    s.done(n1);
    const att = s.take('prefill attention out', R * qDim * F32);
    s.done(qkv, s.take('prefill attention lse', batch * c.numHeads * seqLen * F32));
    return att;
  };
  const separateAttention = (layer: number, n1: number) => {
    let q = s.take('prefill q', R * qDim * F32);
    let k = s.take('prefill k', R * kvDim * F32);
    const v = s.take('prefill v', R * kvDim * F32);
    lora(layer, 'attention_input');
    s.done(n1);
    if (c.qkNorm) {
      const qn = s.take('prefill q norm', R * qDim * F32);
      const qs = s.take('prefill q norm stats', R * c.numHeads * 8);
      const kn = s.take('prefill k norm', R * kvDim * F32);
      const ks = s.take('prefill k norm stats', R * c.numKvHeads * 8);
      s.done(q, k);
      [q, k] = [qn, kn];
      s.done(qs, ks);
    }
    if (L.llama) {
      const rq = s.take('prefill rope q', R * qDim * F32);
      const rk = s.take('prefill rope k', R * kvDim * F32);
      s.done(q, k);
      [q, k] = [rq, rk];
    }
    const att = s.take('prefill attention out', R * qDim * F32);
    const lse = s.take('prefill attention lse', batch * c.numHeads * seqLen * F32);
    s.done(q, k, v, lse);
    return att;
  };
  let x = s.take('prefill embeddings', R * D * F32);
  for (let layer = 0; layer < c.numLayers; layer++) {
    const n1 = s.take('prefill norm', R * D * F32);
    s.done(s.take('prefill norm stats', R * 8));
    const att = L.qkvStacked ? stackedAttention(layer, n1) : separateAttention(layer, n1);
    // The o and down projections write the residual stream directly (residual epilogue).
    const x1 = s.take('prefill residual', R * D * F32);
    lora(layer, 'attention_output');
    s.done(att, x);
    const n2 = s.take('prefill norm', R * D * F32);
    s.done(s.take('prefill norm stats', R * 8));
    let hidden: number;
    if (!L.llama && !(adapters && sitesReading(L, layer, 'mlp_input').length > 0)) {
      // GELU as the up projection's epilogue: pre-activation and activation from one dispatch.
      const up = s.take('prefill up', R * F * F32);
      hidden = s.take('prefill mlp hidden', R * F * F32);
      s.done(n2, up);
    } else {
      const up = s.take('prefill up', R * F * F32);
      const gate = L.llama ? [s.take('prefill gate', R * F * F32)] : [];
      lora(layer, 'mlp_input');
      s.done(n2);
      hidden = s.take('prefill mlp hidden', R * F * F32);
      s.done(...gate, up);
    }
    const out = s.take('prefill layer out', R * D * F32);
    lora(layer, 'mlp_hidden');
    s.done(hidden, x1);
    x = out;
  }
  const m = logits === 'all' ? R : batch;
  let hidden = x;
  if (logits === 'last') {
    hidden = s.take('prefill last hidden', batch * D * F32);
    s.done(x);
  }
  s.take('prefill final norm', m * D * F32);
  const stats = s.take('prefill final norm stats', m * 8);
  s.done(hidden, stats);
  t.add(logits === 'all' ? `logits [${m} × ${V}]` : `last logits [${m} × ${V}]`, m * V * F32);
  return t.buffers;
}

/** recordDecodeStep on `s` (one chunk's scratch): every buffer of the step; returns the logits' bucket. */
function decodeStep(s: ScratchSim, L: ModelLayout, B: number): number {
  const { c, D, F, V, qDim, kvDim } = L;
  const project = (layer: number, role: ProjectionRole, outDim: number) => {
    const y = s.take(`decode ${role}`, B * outDim * F32);
    if (adapted(L, layer, role)) s.done(s.take('decode lora H', B * L.r * F32));
    return y;
  };
  // A residual add rides in the norm after it (recordAddNormForward): sum, y and stats are
  // taken before the two terms are done with.
  const addNorm = (a: number, b: number, label: string) => {
    const sum = s.take('decode residual', B * D * F32);
    const y = s.take(label, B * D * F32);
    const stats = s.take(`${label} stats`, B * 8);
    s.done(a, b);
    return { sum, y, stats };
  };
  let x = s.take('decode embeddings', B * D * F32);
  // The MLP output the next norm adds into x.
  let pending: number | null = null;
  for (let layer = 0; layer < c.numLayers; layer++) {
    let n1: number;
    if (pending === null) {
      n1 = s.take('decode norm', B * D * F32);
      s.done(s.take('decode norm stats', B * 8));
    } else {
      const n = addNorm(x, pending, 'decode norm');
      x = n.sum;
      n1 = n.y;
      s.done(n.stats);
    }
    let att: number;
    if (L.qkvStacked) {
      // One product into one buffer; each adapter site reading n1 runs once (its H a temporary).
      const qkv = s.take('decode q, k, v', qkvStackBytes(L, B));
      for (let i = sitesReading(L, layer, 'attention_input').length; i > 0; i--) s.done(s.take('decode lora H', B * L.r * F32));
      s.done(n1);
      att = s.take('decode attention', B * qDim * F32);
      s.done(qkv);
    } else {
      let q = project(layer, 'q', qDim);
      let k = project(layer, 'k', kvDim);
      const v = project(layer, 'v', kvDim);
      s.done(n1);
      if (c.qkNorm) {
        const qn = s.take('decode q norm', B * qDim * F32);
        const qs = s.take('decode q norm stats', B * c.numHeads * 8);
        const kn = s.take('decode k norm', B * kvDim * F32);
        const ks = s.take('decode k norm stats', B * c.numKvHeads * 8);
        s.done(q, k, qs, ks);
        [q, k] = [qn, kn];
      }
      if (L.llama) {
        const rq = s.take('decode rope q', B * qDim * F32);
        const rk = s.take('decode rope k', B * kvDim * F32);
        s.done(q, k);
        [q, k] = [rq, rk];
      }
      s.done(k, v);
      att = s.take('decode attention', B * qDim * F32);
      s.done(q);
    }
    const o = project(layer, 'o', D);
    s.done(att);
    const { sum: x1, y: n2, stats: n2Stats } = addNorm(x, o, 'decode norm');
    s.done(n2Stats);
    const up = project(layer, 'up', F);
    const gate = L.llama ? [project(layer, 'gate', F)] : [];
    s.done(n2);
    const hidden = s.take('decode mlp hidden', B * F * F32);
    s.done(...gate, up);
    const down = project(layer, 'down', D);
    s.done(hidden);
    x = x1;
    pending = down;
  }
  let nf: number;
  if (pending === null) {
    nf = s.take('decode final norm', B * D * F32);
    s.done(x, s.take('decode final norm stats', B * 8));
  } else {
    const n = addNorm(x, pending, 'decode final norm');
    nf = n.y;
    s.done(n.sum, n.stats);
  }
  const logits = s.take(`decode logits [${B} × ${V}]`, B * V * F32);
  s.done(nf);
  return logits;
}

/** Every storage buffer generate() creates in a fresh pool, in its acquire/release order. */
export function samplingBuffers(L: ModelLayout, shape: SamplingShape): SamplingMemory {
  const { c } = L;
  const B = shape.batch;
  const P = shape.promptTokens;
  const maxNew = shape.completionTokens;
  const chunk = shape.stepsPerSubmit ?? DEFAULT_STEPS_PER_SUBMIT;
  const pool = new PoolSim();
  const kv = new Tally();
  kv.add('KV cache', B * c.numKvHeads * (P + maxNew) * c.headDim * F32, 2 * c.numLayers);
  pool.acquire(kv.buffers);
  const call = new Tally();
  call.add('sampling pads', B * 4);
  call.add('sampled tokens', B * maxNew * 4);
  call.add('sampled log-probs', B * maxNew * 4);
  call.add('sampling seen-id bitset', B * Math.ceil(c.vocabSize / 32) * 4);
  pool.acquire(call.buffers);
  // A step's sampler output: its token ids live into the next step (and chunk).
  const sample = () => {
    const t = new Tally();
    t.add('sample tokens', B * 4);
    t.add('sample log-probs', B * 4);
    return { tokens: t.buffers[0], logprobs: t.buffers[1] };
  };
  const prefill = prefillBuffers(L, B, P);
  let prev = sample();
  pool.acquire([...prefill, prev.tokens, prev.logprobs]);
  pool.release([...prefill, prev.logprobs]);
  for (let from = 1; from < maxNew; from += chunk) {
    const to = Math.min(maxNew, from + chunk);
    const acquired = new Tally();
    const scratch = new ScratchSim(acquired);
    const released: BufferEstimate[] = [];
    for (let step = from; step < to; step++) {
      const positions = new Tally();
      positions.add('decode positions', B * 4);
      pool.acquire(positions.buffers);
      const before = acquired.buffers.length;
      scratch.done(decodeStep(scratch, L, B));
      pool.acquire(acquired.buffers.slice(before));
      const next = sample();
      pool.acquire([next.tokens, next.logprobs]);
      released.push(...positions.buffers, prev.tokens, next.logprobs);
      prev = next;
    }
    pool.release([...released, ...acquired.buffers]);
  }
  return { kvCache: kv.buffers, other: pool.created.filter((b) => !kv.buffers.includes(b)), prefill };
}
